import type { z } from 'zod';
import { ConflictError } from '../../lib/core/errors';
import { parseRecord, type RecordStore, type Versioned } from '../../lib/aws/records';

/** One write of a record, and the condition it carried (as the control table sees it). */
export interface RecordWrite {
  key: string;
  condition: 'version' | 'absent' | null;
}

/**
 * The control table in memory (lib/aws/table-store.ts's semantics without DynamoDB): a version
 * per record, conditional creates and replaces, every write recorded with its condition.
 */
export class MemoryRecords implements RecordStore {
  readonly items = new Map<string, { text: string; version: number }>();
  readonly writes: RecordWrite[] = [];

  read<S extends z.ZodType>(key: string, schema: S): Promise<Versioned<z.output<S>> | null> {
    const item = this.items.get(key);
    return Promise.resolve(
      item === undefined ? null : parseRecord(schema, key, { text: item.text, etag: String(item.version) }),
    );
  }

  async readIfChanged<S extends z.ZodType>(
    key: string,
    schema: S,
    etag: string | null,
  ): Promise<{ changed: false } | ({ changed: true } & Versioned<z.output<S>>) | null> {
    const got = await this.read(key, schema);
    if (got === null) return null;
    return got.etag === etag ? { changed: false } : { changed: true, ...got };
  }

  readText(key: string): Promise<string | null> {
    return Promise.resolve(this.items.get(key)?.text ?? null);
  }

  private write(key: string, value: unknown, condition: RecordWrite['condition'], etag?: string): Promise<string> {
    this.writes.push({ key, condition });
    const item = this.items.get(key);
    if (condition === 'absent' && item !== undefined) return Promise.reject(new ConflictError(`${key} exists`));
    if (condition === 'version' && String(item?.version) !== etag)
      return Promise.reject(new ConflictError(`${key} is not at version ${etag ?? ''}`));
    const version = (item?.version ?? 0) + 1;
    this.items.set(key, { text: JSON.stringify(value), version });
    return Promise.resolve(String(version));
  }

  create(key: string, value: unknown): Promise<string> {
    return this.write(key, value, 'absent');
  }

  replace(key: string, value: unknown, etag: string): Promise<string> {
    return this.write(key, value, 'version', etag);
  }

  put(key: string, value: unknown): Promise<string> {
    return this.write(key, value, null);
  }
}
