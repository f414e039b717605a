import { z } from 'zod';
import { MAX_STAGES, stageNameSchema } from './pipeline';

/**
 * Schemas of everything stored under the state prefix and of the task message. Every read is
 * validated against one of these; `version` lets a future layout be told apart.
 *
 * Stored records are read the way a rolling upgrade needs: a field this release does not know
 * (one the next release added) is dropped, not refused, and the next version number is
 * accepted, so a node or function one release behind stops nothing. The next version may only
 * add fields. The task message, a producer's input, keeps every field it carries.
 */

/** The version field of a stored record: this release's, or the next one's (which only adds fields). */
export const storedVersion = <V extends number>(current: V) => z.union([z.literal(current), z.literal(current + 1)]);

/**
 * True for a name every plain object already answers (`constructor`, `__proto__`, `toString`):
 * node names and task ids are keys of stored records (`state.nodes[node]`, `tasks[taskId]`), where
 * such a name would read Object.prototype's member instead of nothing, or be dropped on parsing.
 */
export const isInheritedName = (name: string): boolean => name in Object.prototype;
const notInherited = (name: string): boolean => !isInheritedName(name);
const INHERITED = 'must not be a name every JavaScript object has (constructor, __proto__, toString, …)';

const nodeName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
  .refine(notInherited, INHERITED);
const taskId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/)
  .refine(notInherited, INHERITED);

/** One in-flight task as the worker reports it. */
/** The stores a node's work needs: S3 for task state, SQS for the tasks, DynamoDB for the lease. */
export const STORE_NAMES = ['s3', 'sqs', 'dynamodb'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

export const inFlightTaskSchema = z.object({
  taskId,
  /** Counter that advances whenever the task makes progress (ticks, bytes, frames). */
  progress: z.number().int().min(0),
  stage: z.string().max(64).optional(),
  /** Cumulative CPU milliseconds of the task's stage process, when it runs in one. */
  stageCpuMs: z.number().min(0).optional(),
});
export type InFlightTask = z.output<typeof inFlightTaskSchema>;

/** One health sample taken by the agent every sample interval. */
export const sampleSchema = z.object({
  /** Monotonic sequence number per agent boot; with `boot` it orders samples. */
  seq: z.number().int().min(0),
  /** The node's wall clock in ms: informational only, never compared across machines. */
  at: z.number(),
  /**
   * This machine's monotonic clock at the sample (ms): only the difference between two samples
   * of one boot is used, a duration on one machine (how long after a sample the lease carried
   * its agent took a newer one, lib/core/fleet/liveness.ts). Older agents leave it out.
   */
  mono: z.number().min(0).optional(),
  workerProcesses: z.number().int().min(0),
  cpuPercent: z.number().min(0),
  memoryBytes: z.number().int().min(0),
  /** Tasks completed on this node since the worker registry began: a cumulative counter. */
  completedTotal: z.number().int().min(0),
  /** Tasks completed in the completion-rate window (5 min by default): a reported metric. */
  completionsInWindow: z.number().int().min(0),
  inFlight: z.array(inFlightTaskSchema).max(256),
  /** Visible plus in-flight messages of the task queue, or null when it could not be read. */
  backlog: z.number().int().min(0).nullable(),
  epochSeen: z.number().int().min(0),
  /** The epoch the worker consumes under, or null when it does not consume. */
  consumingEpoch: z.number().int().min(0).nullable(),
  /**
   * The agent's word at the sample: this node holds a valid lease, so its worker should be
   * consuming. A worker that does not while this is true is not waiting but stuck (one that
   * hung before its first poll leaves the previous worker's null in the registry). Older
   * agents leave it out: their samples are judged as before.
   */
  mayConsume: z.boolean().optional(),
  /**
   * The stores this node's work needs that it could not reach at the sample (its last request
   * to each failed, and none has succeeded since). Absent when it reaches them all.
   */
  unreachable: z.array(z.enum(STORE_NAMES)).min(1).max(3).optional(),
  /**
   * Milliseconds since the worker's last passing self-test (this machine's monotonic clock),
   * or null when it has none (a stopped worker, a failing or frozen one). A standby is ready
   * only with a recent one. Older agents leave it out, and are never ready standbys.
   */
  proofAgeMs: z.number().min(0).nullable().optional(),
  /**
   * Which worker process the sample saw (`<pid>:<start ticks>`, unique on this machine), or null
   * when none runs. Recovery after a restart counts only the restarted worker's samples. Older
   * agents leave it out.
   */
  worker: z.string().max(64).nullable().optional(),
  /**
   * The agent's own figures, for the node-side metrics (older agents leave them out):
   * how long its last peer-sync round took (ms, this machine's monotonic clock; absent before the
   * first), the CAS races its peer-sync and lease lost in the completion window, and, on the
   * primary, the lease it had left (ms by the same clock).
   */
  syncMs: z.number().min(0).optional(),
  casConflicts: z.number().int().min(0).optional(),
  leaseLeftMs: z.number().min(0).optional(),
});
export type Sample = z.output<typeof sampleSchema>;

/** `nodes/<node>/heartbeat.json`: the latest samples of one node, newest last. */
export const heartbeatSchema = z.object({
  version: storedVersion(1),
  node: nodeName,
  /** Random id of this agent process: sequence numbers restart with it. */
  boot: z.string().min(1).max(64),
  instanceId: z.string().max(64).optional(),
  agentVersion: z.string().max(32),
  role: z.enum(['primary', 'pending', 'standby', 'fenced']),
  samples: z.array(sampleSchema).min(1).max(200),
});
export type Heartbeat = z.output<typeof heartbeatSchema>;

/**
 * `leader.json`: who is primary, with an epoch that only grows. Changed by CAS only. Not strict:
 * records of older agents, which carried `beat` and `peers`, still parse (those fields are dropped).
 */
export const leaderSchema = z.object({
  version: storedVersion(1),
  primary: nodeName,
  epoch: z.number().int().min(1),
  /** Bumped on every renewal so the content, and therefore the ETag, changes. */
  renewals: z.number().int().min(0),
  reason: z.string().max(500),
  changedBy: z.string().max(128),
  /** The primary of the previous epoch, if any. */
  previous: nodeName.nullable().default(null),
  /**
   * When the new primary may start consuming: `immediate` (the old one is confirmed stopped,
   * or the lease expired by the promoter's own clock) or `await-fence` (a full lease expiry by
   * the new primary's own clock, counted from when it saw the replaced version).
   */
  handover: z.enum(['immediate', 'await-fence']).default('immediate'),
  /**
   * The version this record replaced (its epoch and renewal count). A new primary that saw
   * exactly that version times its handover wait from when it saw it (lib/core/fleet/lease.ts).
   */
  replaces: z.object({ epoch: z.number().int().min(0), renewals: z.number().int().min(0) }).optional(),
  /**
   * An operator's planned handover (`fleet switchover`), written by CAS on this record for its
   * holder and epoch; the primary drains and hands over (lib/core/fleet/switchover.ts).
   */
  switchover: z
    .object({
      id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
      to: nodeName,
      /** The epoch it was made for: a request for another epoch is stale. */
      epoch: z.number().int().min(1),
      by: z.string().max(200),
      reason: z.string().max(300),
    })
    .optional(),
});
export type Leader = z.output<typeof leaderSchema>;
export type SwitchoverRequest = NonNullable<Leader['switchover']>;

/**
 * `nodes/<node>/beat` (control table): a node's newest sample, written by it every sample while it
 * is not the primary, with the stores it cannot reach (a standby that cannot is not ready).
 */
export const beatSchema = z.object({
  version: storedVersion(1),
  boot: z.string().min(1).max(64),
  seq: z.number().int().min(0),
  unreachable: z.array(z.enum(STORE_NAMES)).min(1).max(3).optional(),
});
export type Beat = z.output<typeof beatSchema>;

/** `tasks/<taskId>/done.json`: created once with If-None-Match: *, by the first finisher. */
export const doneSchema = z.object({
  version: storedVersion(1),
  taskId,
  node: nodeName,
  epoch: z.number().int().min(0),
  /** The finisher's wall clock: informational, the object's existence is the fact. */
  finishedAt: z.number(),
});
export type Done = z.output<typeof doneSchema>;

/**
 * `outputs/<taskId>/<stage>.json`: which node produced a stage's output, under which epoch.
 * Created when absent, replaced only by CAS and never over a newer epoch's.
 */
export const stageOutputSchema = z.strictObject({
  taskId,
  stage: stageNameSchema,
  node: nodeName,
  epoch: z.number().int().min(0),
});
export type StageOutput = z.output<typeof stageOutputSchema>;

/** A relative path of plain segments: no `.` or `..`, no empty one, no leading `/`. */
const relativePath = z
  .string()
  .min(1)
  .max(512)
  .refine(
    (p) => p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && !seg.includes('\\')),
    'must be a relative path of plain segments',
  );

/** A file a stage produced, uploaded before its checkpoint: where it is, and what its bytes are. */
export const artifactSchema = z.strictObject({
  path: relativePath,
  key: z.string().min(1).max(1024),
  size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type Artifact = z.output<typeof artifactSchema>;

/**
 * `tasks/<taskId>/checkpoint.json`: the stages finished, written by CAS after each stage and
 * before anything is acknowledged; it carries the writer's epoch, and a write from an older
 * epoch than the stored one is refused.
 */
export const checkpointSchema = z.object({
  version: storedVersion(1),
  taskId,
  stages: z.number().int().min(0).max(MAX_STAGES),
  /** The pipeline's length, and the name of the last stage finished (absent in earlier releases). */
  of: z.number().int().min(1).max(MAX_STAGES).optional(),
  stage: stageNameSchema.optional(),
  epoch: z.number().int().min(0),
  node: nodeName,
  /** Output object of each finished stage, keyed by task id so a repeat replaces it (by CAS). */
  outputs: z.record(z.string(), z.string().max(300)),
  /** Each finished stage's artifacts, by stage: what the next stage downloads on another node. */
  artifacts: z.record(stageNameSchema, z.array(artifactSchema).max(2000)).optional(),
  /** Set by the first checkpoint of an attempt that resumed: the stages it found done. */
  resumedFrom: z.number().int().min(0).max(MAX_STAGES).optional(),
  /**
   * The unfinished stage's attempts that ended without success, and the resume token the last
   * one reported: the next attempt, on any node, gets ATTEMPT and RESUME_TOKEN from it.
   */
  next: z
    .strictObject({
      stage: stageNameSchema,
      attempts: z.number().int().min(0).max(10_000),
      token: z.string().max(512).optional(),
    })
    .optional(),
});
export type Checkpoint = z.output<typeof checkpointSchema>;

/**
 * The body of an SQS task message: a `taskId` and the producer's `payload`, any JSON object,
 * passed to each stage untouched (as is any other field). `episode` and `workSeconds` are the
 * format of earlier releases, still read: `workSeconds` is the synthetic stage's work.
 */
export const taskMessageSchema = z.looseObject({
  taskId,
  payload: z.record(z.string(), z.unknown()).optional(),
  episode: z.string().max(128).optional(),
  /** Nominal work in scenario seconds; the synthetic worker divides by its time scale. */
  workSeconds: z.number().min(0).max(86_400).optional(),
  /** Real failures so far, in the body as earlier releases kept them (now a message attribute). */
  failures: z.number().int().min(0).max(1000).optional(),
});
export type TaskMessage = z.output<typeof taskMessageSchema>;

/** The synthetic stage's work: `workSeconds` of the message, or of its payload; none otherwise. */
export const workSecondsOf = (m: TaskMessage): number => {
  const w = m.workSeconds ?? m.payload?.['workSeconds'];
  return typeof w === 'number' && Number.isFinite(w) && w >= 0 ? Math.min(w, 86_400) : 0;
};

export { nodeName as nodeNameSchema, taskId as taskIdSchema };
