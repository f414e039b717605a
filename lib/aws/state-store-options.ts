import type { RetryDeps, RetryPolicy } from '../core/retry';
import type { RecordStore } from './records';

/** The state store's types and defaults (lib/aws/state-store.ts). */

export type { Versioned } from './records';

export interface StateStoreOptions {
  bucket: string;
  /** Key prefix, `peer-sync/` by default; keys passed to the store are relative to it. */
  prefix: string;
  /** Objects larger than this are reported, never parsed. */
  maxObjectBytes: number;
  /** Retries of one request on throttling or connection errors. */
  requestRetry?: RetryPolicy;
  /** Re-read-and-apply rounds of `update` when a CAS loses. */
  casRetry?: RetryPolicy;
  deps?: RetryDeps;
  /**
   * Records kept elsewhere: keys `owns` says yes to are read and written in `store` (the lease
   * in the DynamoDB control table, lib/aws/table-store.ts), every other key in the bucket.
   */
  records?: { owns: (key: string) => boolean; store: RecordStore };
}

/** Counts of the requests this store made, for drills and cost benches. */
export interface RequestCounts {
  GET: number;
  PUT: number;
  LIST: number;
  bytesUp: number;
  bytesDown: number;
}

// Six attempts span about 1.5 s at most: long enough to outlast a burst of 409s or SlowDowns.
export const DEFAULT_REQUEST_RETRY: RetryPolicy = { attempts: 6, baseMs: 50, capMs: 2_000 };
export const DEFAULT_CAS_RETRY: RetryPolicy = { attempts: 40, baseMs: 10, capMs: 500 };
