import { createHash } from 'node:crypto';
import { z } from 'zod';
import { nodeNameSchema, storedVersion, taskIdSchema } from '../schemas';

/**
 * The fleet's task state as a join-semilattice: every field merges by a
 * max (or, for the completion, by a fixed total order), so merging is commutative,
 * associative and idempotent, and any order of deltas from any nodes converges.
 */
export const TASK_STATUSES = ['queued', 'running', 'checkpointed', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
const rank = (s: TaskStatus): number => TASK_STATUSES.indexOf(s);

/** Who completed a task, as `done.json` records it: the object's creator, not a clock. */
export const completionSchema = z.object({ node: nodeNameSchema, epoch: z.number().int().min(0), at: z.number() });
export type Completion = z.output<typeof completionSchema>;

export const taskEntrySchema = z.object({
  status: z.enum(TASK_STATUSES),
  /** Stages finished (0 … 4), as checkpointed. */
  stages: z.number().int().min(0).max(16),
  progress: z.number().int().min(0),
  /** Highest epoch that wrote a checkpoint for the task. */
  epoch: z.number().int().min(0),
  done: completionSchema.nullable(),
});
export type TaskEntry = z.output<typeof taskEntrySchema>;
export type TaskMap = Readonly<Record<string, TaskEntry>>;

/**
 * Two completions of one task can only differ if `done.json` was misread; pick one by a total
 * order that ignores clocks, so the merge stays a join either way.
 */
const pickDone = (a: Completion | null, b: Completion | null): Completion | null => {
  if (a === null) return b;
  if (b === null) return a;
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? a : b;
  if (a.node !== b.node) return a.node < b.node ? a : b;
  return a.at <= b.at ? a : b;
};

/** The join of two entries of one task: status only moves forward, progress takes the maximum. */
export const mergeEntry = (a: TaskEntry, b: TaskEntry): TaskEntry => {
  const done = pickDone(a.done, b.done);
  return {
    status: done !== null ? 'done' : rank(a.status) >= rank(b.status) ? a.status : b.status,
    stages: Math.max(a.stages, b.stages),
    progress: Math.max(a.progress, b.progress),
    epoch: Math.max(a.epoch, b.epoch),
    done,
  };
};

/** The join of two task maps: the union, merging entries present in both. */
export const mergeTasks = (a: TaskMap, b: TaskMap): Record<string, TaskEntry> => {
  const out: Record<string, TaskEntry> = { ...a };
  for (const [id, entry] of Object.entries(b)) {
    const mine = out[id];
    out[id] = mine === undefined ? entry : mergeEntry(mine, entry);
  }
  return out;
};

/** Buckets the task space so a sync round touches only the buckets that changed. */
export const BUCKETS = 256;

/** FNV-1a: a stable, cheap spread of task ids over the buckets. */
export const bucketOf = (taskId: string, buckets = BUCKETS): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) {
    h ^= taskId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % buckets;
};

/** Splits a task map into buckets. */
export const partition = (tasks: TaskMap, buckets = BUCKETS): Map<number, Record<string, TaskEntry>> => {
  const out = new Map<number, Record<string, TaskEntry>>();
  for (const [id, entry] of Object.entries(tasks)) {
    const b = bucketOf(id, buckets);
    const slot = out.get(b) ?? {};
    slot[id] = entry;
    out.set(b, slot);
  }
  return out;
};

/** A content hash of one bucket, independent of key order. */
export const hashTasks = (tasks: TaskMap): string => {
  const h = createHash('sha256');
  for (const id of Object.keys(tasks).sort()) h.update(id).update('\0').update(JSON.stringify(tasks[id])).update('\n');
  return h.digest('hex').slice(0, 16);
};

/** `manifest.json`: the hash of every non-empty bucket; buckets live in `manifest/<n>.json`. */
export const manifestRootSchema = z.object({
  version: storedVersion(1),
  buckets: z.literal(BUCKETS),
  revision: z.number().int().min(0),
  /** Keyed by bucket number as `String(n)` spells it (no leading zero, below BUCKETS): the key peer-sync looks up. */
  hashes: z.record(
    z
      .string()
      .regex(/^(0|[1-9]\d{0,2})$/)
      .refine((k) => Number(k) < BUCKETS, `must be a bucket number below ${BUCKETS}`),
    z.string().regex(/^[0-9a-f]{16}$/),
  ),
});
export type ManifestRoot = z.output<typeof manifestRootSchema>;

export const manifestShardSchema = z.object({
  version: storedVersion(1),
  bucket: z
    .number()
    .int()
    .min(0)
    .max(BUCKETS - 1),
  tasks: z.record(taskIdSchema, taskEntrySchema),
});
export type ManifestShard = z.output<typeof manifestShardSchema>;

/** What one sync round must do for one bucket. */
export type BucketPlan = 'in-sync' | 'fetch';

/**
 * Buckets to look at this round: those whose local hash differs from the manifest's (either
 * side may know more). Equal hashes mean equal content: nothing to fetch or push.
 */
export const bucketsToSync = (
  localHashes: ReadonlyMap<number, string>,
  remoteHashes: Readonly<Record<string, string>>,
): number[] => {
  const all = new Set<number>([...localHashes.keys(), ...Object.keys(remoteHashes).map(Number)]);
  return [...all].filter((b) => localHashes.get(b) !== remoteHashes[String(b)]).sort((a, b) => a - b);
};

/**
 * Splits off completed tasks older than the retention: they leave the live manifest for the
 * dated archives. Age is by the completion's own timestamp; with a retention of days, a
 * node's clock skew of minutes only shifts when a task is archived, never whether it is kept.
 */
export const splitByAge = (
  tasks: TaskMap,
  now: number,
  retentionMs: number,
): { live: Record<string, TaskEntry>; old: Record<string, TaskEntry> } => {
  const live: Record<string, TaskEntry> = {};
  const old: Record<string, TaskEntry> = {};
  for (const [id, entry] of Object.entries(tasks)) {
    if (entry.done !== null && now - entry.done.at > retentionMs) old[id] = entry;
    else live[id] = entry;
  }
  return { live, old };
};

/** The last instant of year 9999: past it, an ISO date no longer has four year digits. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

/**
 * The archive day of a completion: `YYYY-MM-DD` of its timestamp (UTC). A time outside the years
 * 1970 to 9999 (a skewed or hostile clock; `at` is any finite number) is filed under the nearer
 * end, instead of failing the round with a RangeError or naming an odd key.
 */
export const archiveDay = (entry: TaskEntry): string =>
  new Date(Math.min(Math.max(entry.done?.at ?? 0, 0), LAST_FOUR_DIGIT_YEAR_MS)).toISOString().slice(0, 10);
