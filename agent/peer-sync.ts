import { CorruptObjectError, describeError, lostRace } from '../lib/core/errors';
import {
  archiveDay,
  bucketOf,
  bucketsToSync,
  splitByAge,
  hashTasks,
  manifestRootSchema,
  manifestShardSchema,
  mergeTasks,
  partition,
  BUCKETS,
  type ManifestRoot,
  type TaskEntry,
  type TaskMap,
} from '../lib/core/sync/manifest';
import { bucketOfShardKey, KEYS, PREFIXES, taskOfDoneKey } from '../lib/core/keys';
import { doneSchema } from '../lib/core/schemas';
import { retry, realRetryDeps, type RetryDeps } from '../lib/core/retry';
import type { RequestCounts, StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';

/** What one round cost and did, for the cost counters and the bench. */
export interface RoundStats {
  requests: { GET: number; PUT: number; LIST: number };
  bytesUp: number;
  bytesDown: number;
  bucketsFetched: number;
  bucketsPushed: number;
  rootChanged: boolean;
}

export interface PeerSyncDeps {
  store: StateStore;
  log: Logger;
  /**
   * What this node's worker learned since the last call (agent/task-journal.ts): the whole set
   * on the first call and after the worker started a new generation. Entries merge as a join, so
   * a whole set in place of the changes, or a change read twice, comes to the same.
   */
  localChanges: () => Promise<TaskMap>;
  /** Called once per corrupt object found (alerting is the caller's). */
  onCorrupt?: (key: string, reason: string) => void;
  /** Called for each attempt that lost a CAS race to another node's write and merges again (a node-side metric). */
  onRaced?: () => void;
  /** Wall clock and retention for compacting old completions into archives. */
  now: () => number;
  retentionMs: number;
  deps?: RetryDeps;
}

const EMPTY_ROOT: ManifestRoot = { version: 1, buckets: BUCKETS, revision: 0, hashes: {} };

/**
 * The 30-second peer-sync (the seed's "Peer-Sync Module"): read `manifest.json` with
 * If-None-Match (a 304 costs almost nothing), compare bucket hashes with what this node knows,
 * fetch and merge only the buckets that differ, push the merged buckets by CAS and record their
 * hashes in the root by CAS. A round's requests and bytes grow with what changed, not with the
 * number of tasks held. The merged view of every bucket stays here: the standby's hot copy.
 */
export class PeerSync {
  private root: ManifestRoot = EMPTY_ROOT;
  private rootEtag: string | null = null;
  /**
   * The fleet's task state as this node knows it, per bucket: the shards as last merged, and this
   * node's own changes since. Each bucket's hash and oldest completion are kept beside it, so a
   * round costs what changed: a quiet one compares 256 hashes and hashes nothing.
   */
  private readonly buckets = new Map<number, Record<string, TaskEntry>>();
  private readonly hashes = new Map<number, string>();
  private readonly oldestDone = new Map<number, number>();
  /** Each shard's ETag and hash as this node last read or wrote it. */
  private readonly shards = new Map<number, { etag: string; hash: string }>();
  /** Set when the root was corrupt: the next round lists the shards to rebuild it. */
  private rebuildRoot = false;

  constructor(private readonly deps: PeerSyncDeps) {}

  /** Every task this node knows of, its own and its peers'. */
  known(): Record<string, TaskEntry> {
    return Object.assign({}, ...this.buckets.values()) as Record<string, TaskEntry>;
  }

  private setBucket(bucket: number, tasks: Record<string, TaskEntry>, hash = hashTasks(tasks)): void {
    this.buckets.set(bucket, tasks);
    this.hashes.set(bucket, hash);
    let oldest = Number.POSITIVE_INFINITY;
    for (const entry of Object.values(tasks)) if (entry.done !== null && entry.done.at < oldest) oldest = entry.done.at;
    this.oldestDone.set(bucket, oldest);
  }

  private snapshot(): RequestCounts {
    return { ...this.deps.store.counts };
  }

  private async readRoot(): Promise<void> {
    try {
      const got = await this.deps.store.readIfChanged(KEYS.manifest, manifestRootSchema, this.rootEtag);
      if (got === null) {
        this.root = EMPTY_ROOT;
        this.rootEtag = null;
      } else if (got.changed) {
        this.root = got.value;
        this.rootEtag = got.etag;
      }
    } catch (error) {
      if (!(error instanceof CorruptObjectError)) throw error;
      await this.quarantine(KEYS.manifest, error);
      // Rebuilt this round from the shards themselves, replacing the damage by CAS on its ETag.
      this.root = EMPTY_ROOT;
      this.rootEtag = error.etag;
      this.rebuildRoot = true;
    }
  }

  private async quarantine(key: string, error: CorruptObjectError): Promise<void> {
    await this.deps.store.quarantine(key, error.message, Date.now()).catch(() => undefined);
    this.deps.log.error({ key, err: error.message }, 'corrupt manifest object: copied aside, rebuilt from the fleet');
    this.deps.onCorrupt?.(key, error.message);
  }

  /** The completions recorded by `done.json` for the tasks of one bucket: a shard's floor. */
  private async completionsIn(bucket: number): Promise<Record<string, TaskEntry>> {
    const out: Record<string, TaskEntry> = {};
    for (const key of await this.deps.store.list(PREFIXES.tasks)) {
      const id = taskOfDoneKey(key);
      if (id === null || bucketOf(id) !== bucket) continue;
      const done = await this.deps.store.read(key, doneSchema).catch(() => null);
      if (done !== null)
        out[id] = {
          status: 'done',
          stages: 0,
          progress: 0,
          epoch: done.value.epoch,
          done: { node: done.value.node, epoch: done.value.epoch, at: done.value.finishedAt },
        };
    }
    return out;
  }

  /** Moves old completions into their day's archive (a merge, so repeating it is harmless). */
  private async archive(bucket: number, old: Record<string, TaskEntry>): Promise<void> {
    const byDay = new Map<string, Record<string, TaskEntry>>();
    for (const [id, entry] of Object.entries(old))
      byDay.set(archiveDay(entry), { ...byDay.get(archiveDay(entry)), [id]: entry });
    for (const [day, tasks] of byDay) {
      await this.deps.store.update(KEYS.archive(day, bucket), manifestShardSchema, (current) => ({
        value: { version: 1 as const, bucket, tasks: mergeTasks(current?.tasks ?? {}, tasks) },
        result: null,
      }));
    }
  }

  /**
   * Merges one bucket with its shard and pushes it if this node knows more. When the manifest
   * still lists the hash of the shard this node last read or wrote, the shard is (if its ETag
   * still matches) what this node already merged: the bucket is pushed by CAS on that ETag
   * without reading it first. A peer that wrote it meanwhile makes the CAS fail, and the retry
   * reads it.
   */
  private async syncBucket(
    bucket: number,
    mine: Record<string, TaskEntry>,
  ): Promise<{ hash: string; pushed: boolean }> {
    const key = KEYS.manifestShard(bucket);
    const last = this.shards.get(bucket);
    if (last !== undefined && !this.rebuildRoot && this.root.hashes[String(bucket)] === last.hash)
      return this.pushOver(bucket, mine, last);
    let remote: Record<string, TaskEntry> = {};
    let etag: string | null = null;
    let corrupt = false;
    // Read even when the manifest does not list the bucket yet: a peer may have created the
    // shard and not yet recorded it, and its content must be merged, not overwritten.
    try {
      const shard = await this.deps.store.read(key, manifestShardSchema);
      if (shard !== null) {
        remote = shard.value.tasks;
        etag = shard.etag;
      }
    } catch (error) {
      if (!(error instanceof CorruptObjectError)) throw error;
      await this.quarantine(key, error);
      etag = error.etag;
      corrupt = true;
      remote = await this.completionsIn(bucket);
    }
    const { live: merged, old } = splitByAge(mergeTasks(mine, remote), this.deps.now(), this.deps.retentionMs);
    await this.archive(bucket, old);
    const hash = hashTasks(merged);
    let pushed = false;
    if (corrupt || hash !== hashTasks(remote)) {
      const body = { version: 1, bucket, tasks: merged };
      etag = etag === null ? await this.deps.store.create(key, body) : await this.deps.store.replace(key, body, etag);
      pushed = true;
    }
    this.setBucket(bucket, merged, hash);
    if (etag !== null) this.shards.set(bucket, { etag, hash });
    return { hash, pushed };
  }

  /** The shard unchanged since this node's last look: push the bucket over it by CAS, unread. */
  private async pushOver(
    bucket: number,
    mine: Record<string, TaskEntry>,
    last: { etag: string; hash: string },
  ): Promise<{ hash: string; pushed: boolean }> {
    const { live: merged, old } = splitByAge(mine, this.deps.now(), this.deps.retentionMs);
    await this.archive(bucket, old);
    // Nothing archived: the bucket is `mine`, whose hash is kept.
    const hash = Object.keys(old).length === 0 ? (this.hashes.get(bucket) ?? hashTasks(merged)) : hashTasks(merged);
    if (hash === last.hash) {
      this.setBucket(bucket, merged, hash);
      return { hash, pushed: false };
    }
    let etag: string;
    try {
      etag = await this.deps.store.replace(
        KEYS.manifestShard(bucket),
        { version: 1, bucket, tasks: merged },
        last.etag,
      );
    } catch (error) {
      // Written by a peer since (or gone): the retry reads it.
      this.shards.delete(bucket);
      throw error;
    }
    this.setBucket(bucket, merged, hash);
    this.shards.set(bucket, { etag, hash });
    return { hash, pushed: true };
  }

  /** One round; conflicts restart it (bounded, with jitter). Throws only for I/O failures. */
  async round(): Promise<RoundStats> {
    const before = this.snapshot();
    let fetchedCount = 0;
    let pushedCount = 0;
    let rootChanged = false;
    // This node's news, merged once before any request: a round that fails keeps it, and the
    // next finds its buckets' hashes differ from the manifest's. Old completions among it are
    // moved to the archives by their bucket's sync, never pushed back into the live manifest.
    for (const [b, tasks] of partition(await this.deps.localChanges()))
      this.setBucket(b, mergeTasks(this.buckets.get(b) ?? {}, tasks));
    try {
      await retry(
        async () => {
          await this.readRoot();
          const todo = bucketsToSync(this.hashes, this.root.hashes);
          const cutoff = this.deps.now() - this.deps.retentionMs;
          for (const [b, oldest] of this.oldestDone) if (oldest < cutoff && !todo.includes(b)) todo.push(b);
          if (this.rebuildRoot) {
            const shards = (await this.deps.store.list(PREFIXES.manifestShards)).map(bucketOfShardKey);
            for (const b of shards) if (b !== null && !todo.includes(b)) todo.push(b);
          }
          const newHashes: Record<string, string> = {};
          for (const b of todo) {
            const out = await this.syncBucket(b, this.buckets.get(b) ?? {});
            fetchedCount++;
            if (out.pushed) pushedCount++;
            if (this.root.hashes[String(b)] !== out.hash) newHashes[String(b)] = out.hash;
          }
          if (Object.keys(newHashes).length === 0) return;
          const next: ManifestRoot = {
            ...this.root,
            revision: this.root.revision + 1,
            hashes: { ...this.root.hashes, ...newHashes },
          };
          this.rootEtag =
            this.rootEtag === null
              ? await this.deps.store.create(KEYS.manifest, next)
              : await this.deps.store.replace(KEYS.manifest, next, this.rootEtag);
          this.root = next;
          this.rebuildRoot = false;
          rootChanged = true;
        },
        (error) => {
          if (!lostRace(error)) return false;
          this.deps.onRaced?.();
          this.deps.log.debug({ err: describeError(error) }, 'manifest changed under this round; merging again');
          return true;
        },
        { attempts: 6, baseMs: 20, capMs: 1000 },
        this.deps.deps ?? realRetryDeps,
      );
    } catch (error) {
      // The last attempt's lost race ends the round without asking whether to retry: counted too.
      if (lostRace(error)) this.deps.onRaced?.();
      throw error;
    }
    const after = this.deps.store.counts;
    return {
      requests: { GET: after.GET - before.GET, PUT: after.PUT - before.PUT, LIST: after.LIST - before.LIST },
      bytesUp: after.bytesUp - before.bytesUp,
      bytesDown: after.bytesDown - before.bytesDown,
      bucketsFetched: fetchedCount,
      bucketsPushed: pushedCount,
      rootChanged,
    };
  }
}
