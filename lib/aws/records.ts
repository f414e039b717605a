import type { z } from 'zod';
import { CorruptObjectError, isRetryable, lostRace, ValidationError } from '../core/errors';
import { retry, type RetryDeps, type RetryPolicy } from '../core/retry';
import { parseJsonText, parseWith } from '../core/validate';
import { toFleetError } from './errors';

/** A stored value with the version (S3 ETag, table item version) that guards its next compare-and-swap. */
export interface Versioned<T> {
  value: T;
  etag: string;
}

/**
 * A store of versioned JSON records with conditional writes: the S3 state store
 * (lib/aws/state-store.ts) and the DynamoDB control table (lib/aws/table-store.ts). An `etag`
 * is whatever names one version of a record in its store: an S3 ETag, a table item's version.
 */
export interface RecordStore {
  read<S extends z.ZodType>(key: string, schema: S): Promise<Versioned<z.output<S>> | null>;
  readIfChanged<S extends z.ZodType>(
    key: string,
    schema: S,
    etag: string | null,
  ): Promise<{ changed: false } | ({ changed: true } & Versioned<z.output<S>>) | null>;
  /** Creates the record only if it does not exist; ConflictError otherwise. */
  create(key: string, value: unknown): Promise<string>;
  /** Replaces the record only if its version is still `etag`; ConflictError otherwise. */
  replace(key: string, value: unknown, etag: string): Promise<string>;
  /** Unconditional write, for records with a single writer. */
  put(key: string, value: unknown): Promise<string>;
  /** The record's raw text, unvalidated (for quarantine copies); null when absent. */
  readText(key: string): Promise<string | null>;
}

/** Parses a record's text against its schema; damage becomes CorruptObjectError naming `where` and the version. */
export const parseRecord = <S extends z.ZodType>(
  schema: S,
  where: string,
  raw: { text: string; etag: string },
): Versioned<z.output<S>> => {
  try {
    return { value: parseWith(schema, parseJsonText(raw.text, where), where), etag: raw.etag };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new CorruptObjectError(error.message, error.field, where, raw.etag, { cause: error });
  }
};

/**
 * Compare-and-swap loop over any record store: reads the current value, lets `prepare` gather
 * what `apply` needs, lets `apply` compute the next value (null: nothing to write), writes it
 * conditionally, and on conflict starts over after a jittered pause, gathering again. `apply`
 * must be pure. A corrupt current record goes to `onCorrupt` (reported and copied aside), is
 * treated as absent, and is replaced by CAS against its own version: nothing valid is overwritten.
 */
export const casUpdate = <S extends z.ZodType, R, P = undefined>(
  store: RecordStore,
  policy: { casRetry: RetryPolicy; deps: RetryDeps },
  key: string,
  schema: S,
  apply: (current: z.output<S> | null, prepared: P) => { value: z.output<S> | null; result: R },
  onCorrupt?: (error: CorruptObjectError) => Promise<void>,
  prepare?: (current: z.output<S> | null, damage: CorruptObjectError | null) => Promise<P>,
): Promise<{ written: boolean; result: R }> =>
  retry(
    async () => {
      let current: Versioned<z.output<S>> | null;
      let damage: CorruptObjectError | null = null;
      try {
        current = await store.read(key, schema);
      } catch (error) {
        if (!(error instanceof CorruptObjectError) || onCorrupt === undefined) throw error;
        await onCorrupt(error);
        current = null;
        damage = error;
      }
      const prepared = (await prepare?.(current?.value ?? null, damage)) as P;
      const next = apply(current?.value ?? null, prepared);
      if (next.value === null) return { written: false, result: next.result };
      const etag = current?.etag ?? damage?.etag;
      if (etag === undefined) await store.create(key, next.value);
      else await store.replace(key, next.value, etag);
      return { written: true, result: next.result };
    },
    lostRace,
    policy.casRetry,
    policy.deps,
  );

/** One request, its errors typed where it returns (`what` names it) and retried while retryable. */
export const retried = <T>(what: string, fn: () => Promise<T>, policy: RetryPolicy, deps: RetryDeps): Promise<T> =>
  retry(
    async () => {
      try {
        return await fn();
      } catch (error) {
        throw toFleetError(error, what);
      }
    },
    isRetryable,
    policy,
    deps,
  );
