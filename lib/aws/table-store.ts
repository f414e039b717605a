import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { z } from 'zod';
import { lostRace, type CorruptObjectError, OversizedError, TransientError, UnreachableError } from '../core/errors';
import { realRetryDeps, type RetryDeps, type RetryPolicy } from '../core/retry';
import { toFleetError } from './errors';
import { casUpdate, parseRecord, retried, type RecordStore, type Versioned } from './records';
import { sdk } from './sdk';
import { DEFAULT_CAS_RETRY, DEFAULT_REQUEST_RETRY } from './state-store-options';
import { landing, WriteTokens } from './write-tokens';

/** The attributes of a control-table item. */
export const ITEM = { key: 'k', body: 'body', version: 'v', tokens: 'tokens' } as const;

export interface TableStoreOptions {
  table: string;
  /** Bodies longer than this are reported, never parsed; never more than BODY_LIMIT. */
  maxObjectBytes: number;
  requestRetry?: RetryPolicy;
  deps?: RetryDeps;
}

/** What this store sent and what DynamoDB billed for it (ReturnConsumedCapacity), for drills and cost benches. */
export interface TableCounts {
  reads: number;
  writes: number;
  readUnits: number;
  writeUnits: number;
}

type Item = Record<string, AttributeValue>;

/** A create's expectation: no item yet. */
const ABSENT = Symbol('absent');

/**
 * The longest body an item may carry: DynamoDB refuses an item over 400 KB, its attribute names
 * and values together (Developer Guide, "Service, account, and table quotas": item size); 4 KiB is
 * left for the key, the version and the write tokens. A body over it is refused here, as an
 * oversized object, before DynamoDB answers a ValidationException.
 */
export const BODY_LIMIT = 400 * 1024 - 4096;

const text = (item: Item | undefined, name: string): string | undefined => {
  const v = item?.[name];
  return v !== undefined && 'S' in v ? v.S : undefined;
};

/** The item's version as an etag; '' for an item without one (written by hand): no CAS can match it but its own. */
const versionOf = (item: Item): string => {
  const v = item[ITEM.version];
  return v !== undefined && 'N' in v && v.N !== undefined ? v.N : '';
};

/**
 * Versioned JSON records in a DynamoDB table (on demand): one item per key, `{k, body, v, tokens}`.
 * The version `v` counts the item's writes and is its etag; a create is conditional on
 * `attribute_not_exists(k)`, a replace on `v = :etag`. Every read is strongly consistent
 * (ConsistentRead): an eventually consistent read "may not reflect the results of a recently
 * completed write", which a lease cannot afford. Throttling, 5xx and broken connections are
 * retried with jitter. As in the S3 store, an outcome the caller cannot see is resolved, not
 * guessed: each write carries a token at the head of the item's token chain, and a write answered
 * with a 500 or a reset, or refused by its condition after an earlier attempt of it lost its
 * response, reads the item and counts as done when it finds its token.
 *
 * Why a table for some records: a conditional S3 PUT costs $5 per million, a DynamoDB write of an
 * item up to 1 KB $0.625 per million, and the lease is renewed every 10 s (docs/deploy.md, "Cost").
 */
export class TableStore implements RecordStore {
  readonly counts: TableCounts = { reads: 0, writes: 0, readUnits: 0, writeUnits: 0 };
  // 8 tokens (296 bytes) keep a lease item under the 1 KB of one write request unit.
  private readonly tokens = new WriteTokens(8);
  private readonly requestRetry: RetryPolicy;
  private readonly deps: RetryDeps;
  private readonly limit: number;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: TableStoreOptions,
  ) {
    this.requestRetry = options.requestRetry ?? DEFAULT_REQUEST_RETRY;
    this.deps = options.deps ?? realRetryDeps;
    this.limit = Math.min(options.maxObjectBytes, BODY_LIMIT);
  }

  private where(key: string): string {
    return `${this.options.table}/${key}`;
  }

  private request<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return retried(what, fn, this.requestRetry, this.deps);
  }

  /** One strongly consistent GetItem, unretried; undefined when the item does not exist. */
  private async getItem(key: string): Promise<Item | undefined> {
    this.counts.reads++;
    const out = await this.client.send(
      new (sdk.dynamodb().GetItemCommand)({
        TableName: this.options.table,
        Key: { [ITEM.key]: { S: key } },
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    this.counts.readUnits += out.ConsumedCapacity?.CapacityUnits ?? 0;
    return out.Item;
  }

  /** The item's body and version, retried; null when absent. Oversized bodies throw OversizedError. */
  private async fetch(key: string): Promise<{ text: string; etag: string } | null> {
    const where = this.where(key);
    return this.request(`GetItem ${where}`, async () => {
      const item = await this.getItem(key);
      if (item === undefined) return null;
      const etag = versionOf(item);
      const body = text(item, ITEM.body) ?? '';
      this.tokens.remember(key, etag, text(item, ITEM.tokens));
      const size = Buffer.byteLength(body);
      if (size > this.limit)
        throw new OversizedError(`${where}: ${size} bytes exceeds the limit of ${this.limit}`, where, etag, size);
      return { text: body, etag };
    });
  }

  async read<S extends z.ZodType>(key: string, schema: S): Promise<Versioned<z.output<S>> | null> {
    const raw = await this.fetch(key);
    return raw === null ? null : parseRecord(schema, this.where(key), raw);
  }

  /** DynamoDB has no conditional read: a GetItem (1 read unit up to 4 KB) compared by version. */
  async readIfChanged<S extends z.ZodType>(
    key: string,
    schema: S,
    etag: string | null,
  ): Promise<{ changed: false } | ({ changed: true } & Versioned<z.output<S>>) | null> {
    const raw = await this.fetch(key);
    if (raw === null) return null;
    if (etag !== null && raw.etag === etag) return { changed: false };
    return { changed: true, ...parseRecord(schema, this.where(key), raw) };
  }

  async readText(key: string): Promise<string | null> {
    const where = this.where(key);
    const item = await this.request(`GetItem ${where}`, () => this.getItem(key));
    return item === undefined ? null : (text(item, ITEM.body) ?? '').slice(0, this.limit);
  }

  /**
   * One write of the item: `expected` is the version it must have (ABSENT: none; undefined: any).
   * Resolves with the new version, or '' when this write landed and another has landed on top since.
   */
  private async write(key: string, value: unknown, expected: string | typeof ABSENT | undefined): Promise<string> {
    const where = this.where(key);
    const body = JSON.stringify(value);
    const size = Buffer.byteLength(body);
    if (size > this.limit)
      throw new OversizedError(`${where}: ${size} bytes exceeds the limit of ${this.limit}`, where, '', size);
    const { token, chain } = this.tokens.next(key, expected === ABSENT ? undefined : expected);
    const conditional = expected !== undefined;
    const names: Record<string, string> = { '#b': ITEM.body, '#v': ITEM.version, '#t': ITEM.tokens };
    const values: Item = { ':b': { S: body }, ':t': { S: chain.join(' ') }, ':one': { N: '1' } };
    let condition: string | undefined;
    if (expected === ABSENT || expected === '') {
      // DynamoDB refuses a request naming an attribute no expression uses.
      names['#k'] = ITEM.key;
      // '' is an item without a version (written by hand): replaced only while it still has none.
      condition =
        expected === ABSENT ? 'attribute_not_exists(#k)' : 'attribute_exists(#k) AND attribute_not_exists(#v)';
    } else if (expected !== undefined) {
      condition = '#v = :expected';
      values[':expected'] = { N: expected };
    }
    let attempts = 0;
    return this.request(`UpdateItem ${where}`, async () => {
      this.counts.writes++;
      try {
        const out = await this.client.send(
          new (sdk.dynamodb().UpdateItemCommand)({
            TableName: this.options.table,
            Key: { [ITEM.key]: { S: key } },
            UpdateExpression: 'SET #b = :b, #t = :t ADD #v :one',
            ...(condition === undefined ? {} : { ConditionExpression: condition }),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'UPDATED_NEW',
            ReturnConsumedCapacity: 'TOTAL',
          }),
        );
        this.counts.writeUnits += out.ConsumedCapacity?.CapacityUnits ?? 0;
        const version = out.Attributes?.[ITEM.version];
        // ADD always returns the new version; '' would read as "landed, then superseded".
        if (version === undefined || !('N' in version) || version.N === undefined)
          throw new TransientError(`UpdateItem ${where}: the answer has no version`);
        this.tokens.remember(key, version.N, chain);
        return version.N;
      } catch (error) {
        attempts++;
        const refused = toFleetError(error, `UpdateItem ${where}`);
        // As in lib/aws/state-store.ts: a 500 or a reset may follow an applied write, and a
        // refusal after an earlier attempt may be that attempt's own write. The token decides.
        const ambiguous = refused instanceof TransientError || refused instanceof UnreachableError;
        // As in the S3 store: a refusal after a retry, ours or the SDK's own, may be our own write.
        const retriedBySdk =
          (error as { $metadata?: { attempts?: number } }).$metadata?.attempts !== undefined &&
          (error as { $metadata: { attempts: number } }).$metadata.attempts !== 1;
        if (ambiguous || (conditional && lostRace(refused) && (attempts > 1 || retriedBySdk))) {
          const now = ambiguous ? await this.look(key).catch(() => null) : await this.look(key);
          const mine = landing(token, now);
          if (mine.landed === 'latest') {
            this.tokens.remember(key, mine.etag, now?.tokens);
            return mine.etag;
          }
          if (mine.landed === 'superseded') return '';
        }
        throw refused;
      }
    });
  }

  /** The item's version and token chain as they are now, one read; null when absent. */
  private async look(key: string): Promise<{ etag: string; tokens: string | undefined } | null> {
    const item = await this.getItem(key);
    return item === undefined ? null : { etag: versionOf(item), tokens: text(item, ITEM.tokens) };
  }

  create(key: string, value: unknown): Promise<string> {
    return this.write(key, value, ABSENT);
  }

  replace(key: string, value: unknown, etag: string): Promise<string> {
    return this.write(key, value, etag);
  }

  put(key: string, value: unknown): Promise<string> {
    return this.write(key, value, undefined);
  }

  /** Compare-and-swap loop over this table (`casUpdate` in lib/aws/records.ts). */
  update<S extends z.ZodType, R>(
    key: string,
    schema: S,
    apply: (current: z.output<S> | null) => { value: z.output<S> | null; result: R },
    onCorrupt?: (error: CorruptObjectError) => Promise<void>,
  ): Promise<{ written: boolean; result: R }> {
    return casUpdate(this, { casRetry: DEFAULT_CAS_RETRY, deps: this.deps }, key, schema, apply, onCorrupt);
  }
}
