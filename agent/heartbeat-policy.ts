import { isProven } from '../lib/core/fleet/liveness';
import { judgeSample } from '../lib/core/fleet/stall';
import type { Heartbeat, Leader, Sample } from '../lib/core/schemas';

/**
 * When the agent rewrites its heartbeat object (`nodes/<node>/heartbeat.json`). A standby writes
 * one every sample: its samples are what says it is ready to take over. The primary writes only
 * when it has news, because its lease renewals (every `leaseRenewSeconds`, paid for anyway)
 * carry its newest sample's number (`leader.beat`), and that is what the watchdog judges its
 * liveness by. A healthy idle primary then writes one object per keep-alive instead of one per
 * sample: 8,640 PUTs a month instead of 172,800, and as many fewer S3 notifications and
 * watchdog runs (README "Cost").
 */
export type WriteReason =
  /** Not the primary: every sample is written. */
  | 'not-primary'
  /** Nothing written yet by this agent process. */
  | 'first'
  /** The last write failed, or the last one that landed said some had (cleared by the next). */
  | 'unsent'
  /** The role or the epoch changed since the last write. */
  | 'role'
  /** The messages the worker holds changed (a new primary takes them up from here). */
  | 'held'
  /**
   * A sample of the last `recoverySamples` + 1 failed the stall rule or came from a new worker
   * process: the watchdog judges every sample of a stall and the healthy ones that close it.
   */
  | 'failing'
  /** What the newest sample reports changed (worker, backlog, tasks, completions, epoch, proof). */
  | 'news'
  /** The lease has not carried the previous sample (a renewal failed or is late). */
  | 'lease'
  /** `heartbeatKeepAliveSeconds` since the last write. */
  | 'keep-alive';

/** What the agent remembers of its last successful heartbeat write. */
export interface Written {
  role: Heartbeat['role'];
  epoch: number;
  held: string;
  news: string;
  /** The failed writes before it that the heartbeat reported (`unsent`). */
  unsent: number;
  /** This machine's monotonic clock at the write. */
  at: number;
}

export interface DueInput {
  role: { role: Heartbeat['role']; epoch: number };
  boot: string;
  /** The samples the heartbeat carries, newest last. */
  samples: readonly Sample[];
  held: NonNullable<Heartbeat['held']>;
  /** The sample the last successful lease write carried. */
  carried: Leader['beat'] | null;
  last: Written | null;
  unsent: number;
  now: number;
  keepAliveMs: number;
  recoverySamples: number;
  sampleMs: number;
}

/** The messages held, as the heartbeat names them: a change of receipt is a change. */
export const heldKey = (held: DueInput['held']): string => held.map((h) => `${h.taskId}:${h.receipt}`).join('\n');

/**
 * What a sample reports that anyone reads: the worker, what it consumes under, the queue, the
 * tasks and their stages, the completions, the CAS races, whether its self-test is recent. Not
 * its time, CPU, memory, task progress or lease left: those change every sample, and a
 * healthy primary's would otherwise be rewritten every sample. They are at most a keep-alive old.
 */
export const newsOf = (s: Sample, sampleMs: number): string =>
  JSON.stringify([
    s.workerProcesses,
    s.worker ?? null,
    s.consumingEpoch,
    s.epochSeen,
    s.mayConsume ?? null,
    s.backlog,
    s.completedTotal,
    s.completionsInWindow,
    s.inFlight.map((t) => [t.taskId, t.stage ?? null]),
    s.casConflicts ?? 0,
    isProven(s, sampleMs),
  ]);

/**
 * Is the watchdog's judgement still open among the newest `n` samples: one failed the stall rule
 * (judged against the one before it), or came from another worker process than the one before
 * it (a restarted worker's healthy run starts again: `advanceCounter`)?
 */
const unsettled = (samples: readonly Sample[], n: number): boolean => {
  for (let i = Math.max(0, samples.length - n); i < samples.length; i++) {
    const cur = samples[i];
    const prev = i > 0 ? samples[i - 1] : undefined;
    if (cur === undefined) continue;
    if (judgeSample(prev, cur) !== null) return true;
    if (prev !== undefined && prev.worker !== cur.worker) return true;
  }
  return false;
};

/** Why this sample's heartbeat must be written, or null when the lease says all there is to say. */
export const heartbeatDue = (i: DueInput): WriteReason | null => {
  const newest = i.samples.at(-1);
  if (i.role.role !== 'primary') return 'not-primary';
  if (i.last === null || newest === undefined) return 'first';
  if (i.unsent > 0 || i.last.unsent > 0) return 'unsent';
  if (i.last.role !== i.role.role || i.last.epoch !== i.role.epoch) return 'role';
  if (i.last.held !== heldKey(i.held)) return 'held';
  // The failing samples and the healthy ones after them, until the watchdog can close the incident.
  if (unsettled(i.samples, i.recoverySamples + 1)) return 'failing';
  if (i.last.news !== newsOf(newest, i.sampleMs)) return 'news';
  if (i.carried === null || i.carried === undefined || i.carried.boot !== i.boot || i.carried.seq < newest.seq - 1) return 'lease';
  if (i.now - i.last.at >= i.keepAliveMs) return 'keep-alive';
  return null;
};
