import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getHead, getText } from './s3-get';
import { listPages, type ListedObject } from './s3-list';
import type { z } from 'zod';
import type { CorruptObjectError } from '../core/errors';
import { KEYS } from '../core/keys';
import { lostRace, NotFoundError, TransientError, UnreachableError } from '../core/errors';
import { realRetryDeps, type RetryDeps, type RetryPolicy } from '../core/retry';
import { toFleetError } from './errors';
import { casUpdate, parseRecord, retried, type RecordStore } from './records';
import {
  DEFAULT_CAS_RETRY,
  DEFAULT_REQUEST_RETRY,
  type RequestCounts,
  type StateStoreOptions,
  type Versioned,
} from './state-store-options';
import { landing, WRITE_TOKENS, WriteTokens } from './write-tokens';

export { WRITE_TOKENS };
export type { ListedObject } from './s3-list';
export type { RequestCounts, StateStoreOptions, Versioned } from './state-store-options';

/**
 * JSON objects in the state bucket, with conditional create (If-None-Match: *) and
 * compare-and-swap update (If-Match: etag); every read is validated against its schema.
 * 412 becomes ConflictError; 409 (a concurrent write), throttling and 5xx are retried with
 * jitter. An outcome the caller cannot see is resolved, not guessed: every write carries a
 * token of its own at the head of the object's token chain, and a write answered with a 500 or
 * a broken connection, or a conditional write refused after an earlier attempt of it lost its
 * response, finds its token in the chain and counts as done, even if others wrote on top of it since.
 */
export class StateStore implements RecordStore {
  readonly counts: RequestCounts = { GET: 0, PUT: 0, LIST: 0, bytesUp: 0, bytesDown: 0 };
  private readonly tokens = new WriteTokens();
  private readonly requestRetry: RetryPolicy;
  private readonly casRetry: RetryPolicy;
  private readonly deps: RetryDeps;

  constructor(
    private readonly s3: S3Client,
    private readonly options: StateStoreOptions,
  ) {
    this.requestRetry = options.requestRetry ?? DEFAULT_REQUEST_RETRY;
    this.casRetry = options.casRetry ?? DEFAULT_CAS_RETRY;
    this.deps = options.deps ?? realRetryDeps;
  }

  /** The store that keeps `key` when it is not this bucket (StateStoreOptions.records). */
  private elsewhere(key: string): RecordStore | null {
    const r = this.options.records;
    return r !== undefined && r.owns(key) ? r.store : null;
  }

  /**
   * A read of a record kept elsewhere. A record found nowhere there but present in this bucket was
   * written before it moved (an upgrade: the lease was `peer-sync/leader.json`): it is created
   * there once, as it was, so the fleet keeps its epoch, and the read is made again.
   */
  private async routed<T>(
    key: string,
    other: RecordStore,
    read: (o: RecordStore) => Promise<T | null>,
  ): Promise<T | null> {
    const got = await read(other);
    if (got !== null) return got;
    const legacy = await this.bucketText(key);
    if (legacy === null) return null;
    let value: unknown;
    try {
      value = JSON.parse(legacy);
    } catch {
      // Damaged before it moved: nothing to carry over; the lease's repair starts from nothing.
      return null;
    }
    await other.create(key, value).catch((error: unknown) => {
      if (!lostRace(error)) throw error;
    });
    return await read(other);
  }

  private fullKey(key: string): string {
    return this.options.prefix + key;
  }

  private request<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return retried(what, fn, this.requestRetry, this.deps);
  }

  /** One GET, with an optional If-None-Match; `unchanged` on 304, null when absent. */
  private fetchText(full: string, ifNoneMatch?: string): Promise<{ text: string; etag: string } | 'unchanged' | null> {
    const { bucket, maxObjectBytes: maxBytes } = this.options;
    return this.request(`GET ${full}`, async () => {
      this.counts.GET++;
      const got = await getText(this.s3, { bucket, key: full, maxBytes, ...(ifNoneMatch ? { ifNoneMatch } : {}) });
      if (got === null || got === 'unchanged') return got;
      this.counts.bytesDown += Buffer.byteLength(got.text);
      this.tokens.remember(full, got.etag, got.tokens);
      return got;
    });
  }

  /**
   * Reads and validates one object; null when it does not exist. Throws CorruptObjectError for
   * malformed content and OversizedError above the size limit: callers report and skip.
   */
  async read<S extends z.ZodType>(key: string, schema: S): Promise<Versioned<z.output<S>> | null> {
    const other = this.elsewhere(key);
    if (other !== null) return this.routed(key, other, (o) => o.read(key, schema));
    const full = this.fullKey(key);
    const raw = await this.fetchText(full);
    return raw === null || raw === 'unchanged' ? null : parseRecord(schema, full, raw);
  }

  /**
   * Conditional read (If-None-Match: etag): `unchanged` costs a 304 and no body. Null when the
   * object does not exist. Corrupt content throws CorruptObjectError like `read`.
   */
  async readIfChanged<S extends z.ZodType>(
    key: string,
    schema: S,
    etag: string | null,
  ): Promise<{ changed: false } | ({ changed: true } & Versioned<z.output<S>>) | null> {
    const other = this.elsewhere(key);
    if (other !== null) return this.routed(key, other, (o) => o.readIfChanged(key, schema, etag));
    const full = this.fullKey(key);
    const raw = await this.fetchText(full, etag ?? undefined);
    if (raw === null) return null;
    if (raw === 'unchanged') return { changed: false };
    return { changed: true, ...parseRecord(schema, full, raw) };
  }

  /** The object's token chain and ETag as they are now; null when it does not exist. */
  private async head(full: string): Promise<{ tokens: string | undefined; etag: string } | null> {
    this.counts.GET++;
    try {
      const out = await this.s3.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: full }));
      return { tokens: out.Metadata?.[WRITE_TOKENS], etag: out.ETag ?? '' };
    } catch (error) {
      if (toFleetError(error, full) instanceof NotFoundError) return null;
      throw error;
    }
  }

  /**
   * One conditional or plain PUT. Resolves with the new ETag, or with '' when this write landed
   * but someone else has written on top of it since (the caller's next CAS must then re-read).
   */
  private async putBody(
    key: string,
    value: unknown,
    condition: { IfMatch?: string; IfNoneMatch?: string },
  ): Promise<string> {
    const full = this.fullKey(key);
    const body = JSON.stringify(value);
    const { token, chain } = this.tokens.next(full, condition.IfMatch);
    const conditional = condition.IfMatch !== undefined || condition.IfNoneMatch !== undefined;
    let attempts = 0;
    return this.request(`PUT ${full}`, async () => {
      this.counts.PUT++;
      this.counts.bytesUp += Buffer.byteLength(body);
      try {
        const out = await this.s3.send(
          new PutObjectCommand({
            Bucket: this.options.bucket,
            Key: full,
            Body: body,
            ContentType: 'application/json',
            Metadata: { [WRITE_TOKENS]: chain.join(' ') },
            ...condition,
          }),
        );
        this.tokens.remember(full, out.ETag ?? '', chain);
        return out.ETag ?? '';
      } catch (error) {
        attempts++;
        const refused = toFleetError(error, `PUT ${full}`);
        // A 500 or a broken connection may come after the write was applied (S3 does not say
        // which), so look before sending it again: a plain PUT sent again would only lose its
        // answer again while a caller's responses keep being lost. A refusal may also come only
        // because an earlier attempt (ours, or the SDK's retry of it) landed and lost its
        // response. Either way, our token in the object's chain says the write is there.
        const ambiguous = refused instanceof TransientError || refused instanceof UnreachableError;
        if (
          ambiguous ||
          (conditional &&
            lostRace(refused) &&
            (attempts > 1 || (error as { $metadata?: { attempts?: number } }).$metadata?.attempts !== 1))
        ) {
          // A look that fails itself proves nothing: the write is sent again (or refused) as before.
          const now = ambiguous ? await this.head(full).catch(() => null) : await this.head(full);
          const mine = landing(token, now);
          if (mine.landed === 'latest') {
            this.tokens.remember(full, mine.etag, now?.tokens);
            return mine.etag;
          }
          if (mine.landed === 'superseded') return '';
        }
        throw refused;
      }
    });
  }

  /** Creates the object only if it does not exist (If-None-Match: *); ConflictError otherwise. */
  create(key: string, value: unknown): Promise<string> {
    const other = this.elsewhere(key);
    if (other !== null) return other.create(key, value);
    return this.putBody(key, value, { IfNoneMatch: '*' });
  }

  /** Replaces the object only if its ETag is still `etag`; ConflictError otherwise. */
  replace(key: string, value: unknown, etag: string): Promise<string> {
    const other = this.elsewhere(key);
    if (other !== null) return other.replace(key, value, etag);
    return this.putBody(key, value, { IfMatch: etag });
  }

  /** Unconditional write, for objects with a single writer (a node's own heartbeat). */
  put(key: string, value: unknown): Promise<string> {
    const other = this.elsewhere(key);
    if (other !== null) return other.put(key, value);
    return this.putBody(key, value, {});
  }

  /** Compare-and-swap loop over this store (`casUpdate` in lib/aws/records.ts). */
  update<S extends z.ZodType, R, P = undefined>(
    key: string,
    schema: S,
    apply: (current: z.output<S> | null, prepared: P) => { value: z.output<S> | null; result: R },
    onCorrupt?: (error: CorruptObjectError) => Promise<void>,
    /** Runs after each read and before `apply`: gathers the I/O that `apply` needs. */
    prepare?: (current: z.output<S> | null, damage: CorruptObjectError | null) => Promise<P>,
  ): Promise<{ written: boolean; result: R }> {
    return casUpdate(this, { casRetry: this.casRetry, deps: this.deps }, key, schema, apply, onCorrupt, prepare);
  }

  /**
   * Copies a damaged object aside to `quarantine/` (raw text, reason) and returns the copy's key;
   * created (If-None-Match), never overwritten: a copy is evidence, and nodes may only create.
   */
  async quarantine(key: string, reason: string, at: number): Promise<string> {
    const text = await this.readText(key).catch(() => null);
    const copy = KEYS.quarantine(key, at);
    await this.create(copy, { reason, text });
    return copy;
  }

  /** Reads an object's raw text, unvalidated, for quarantine copies; null when absent. */
  async readText(key: string): Promise<string | null> {
    const other = this.elsewhere(key);
    if (other !== null) return other.readText(key);
    return this.bucketText(key);
  }

  /** The object's raw text in this bucket (never routed elsewhere), null when absent. */
  private bucketText(key: string): Promise<string | null> {
    const full = this.fullKey(key);
    return this.request(`GET ${full}`, () => {
      this.counts.GET++;
      return getHead(this.s3, { bucket: this.options.bucket, key: full, maxBytes: this.options.maxObjectBytes });
    });
  }

  /** Keys (relative to the prefix) under `under`, following continuation tokens. */
  async list(under: string): Promise<string[]> {
    return (await this.listEntries(under)).map((e) => e.key);
  }

  /**
   * Like `list`, with each object's Last-Modified time: S3's own clock, the one clock every
   * reader shares, so operators can order events and age heartbeats without reading them.
   */
  async listEntries(under: string): Promise<ListedObject[]> {
    return (await this.listWithClock(under)).entries;
  }

  /**
   * `listEntries`, plus S3's time when it answered (its `Date` header): ages computed from
   * Last-Modified against it compare S3's clock with itself, never with this machine's.
   */
  async listWithClock(under: string): Promise<{ entries: ListedObject[]; serverNow: number | null }> {
    return listPages(this.s3, { bucket: this.options.bucket, prefix: this.options.prefix, under }, (what, send) =>
      this.request(what, () => {
        this.counts.LIST++;
        return send();
      }),
    );
  }
}
