import { isProven, UNREADY_SAMPLES, workerFault } from '../lib/core/fleet/readiness';
import { judgeSample } from '../lib/core/fleet/stall';
import type { Heartbeat, Sample } from '../lib/core/schemas';

/**
 * When the agent rewrites its heartbeat object (`nodes/<node>/heartbeat.json`). Liveness needs
 * none of it: the primary's is its lease, and a standby's is its beat item in the control table
 * (`nodes/<node>/beat`, a write unit at $0.625 a million against an S3 PUT's $5 and the watchdog
 * run its notification calls), written every sample. So the object is rewritten only with news,
 * failing samples, a role change, or the keep-alive: a healthy idle node writes 8,640 a month
 * instead of 172,800, and as many fewer S3 notifications and watchdog runs (docs/deploy.md, "Cost").
 */
export type WriteReason =
  /** Nothing written yet by this agent process. */
  | 'first'
  /** The last write failed. */
  | 'unsent'
  /** The role or the epoch changed since the last write. */
  | 'role'
  /**
   * The primary: a sample of the last `recoverySamples` + 1 failed the stall rule or came from
   * a new worker process: the watchdog judges every sample of a stall and the healthy ones that
   * close it. A standby: a sample of the last UNREADY_SAMPLES + 1 found its worker not ready.
   */
  | 'failing'
  /** What the newest sample reports changed (worker, backlog, tasks, completions, epoch, proof). */
  | 'news'
  /** `heartbeatKeepAliveSeconds` since the last write. */
  | 'keep-alive';

/** What the agent remembers of its last successful heartbeat write. */
export interface Written {
  role: Heartbeat['role'];
  epoch: number;
  news: string;
  /** This machine's monotonic clock at the write. */
  at: number;
}

export interface DueInput {
  role: { role: Heartbeat['role']; epoch: number };
  /** The samples the heartbeat carries, newest last. */
  samples: readonly Sample[];
  last: Written | null;
  unsent: number;
  now: number;
  keepAliveMs: number;
  recoverySamples: number;
  sampleMs: number;
}

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
    s.unreachable ?? [],
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

/** Samples of a standby's worker that the watchdog judges in a row (UNREADY_SAMPLES), and the one that ends them. */
const UNREADY_WINDOW = UNREADY_SAMPLES + 1;

/** Why this sample's heartbeat must be written, or null when the last one written still says all there is to say. */
export const heartbeatDue = (i: DueInput): WriteReason | null => {
  const newest = i.samples.at(-1);
  if (i.last === null || newest === undefined) return 'first';
  if (i.unsent > 0) return 'unsent';
  if (i.last.role !== i.role.role || i.last.epoch !== i.role.epoch) return 'role';
  // The failing samples and the healthy ones after them, until the watchdog can close the incident.
  const failing =
    i.role.role === 'primary'
      ? unsettled(i.samples, i.recoverySamples + 1)
      : i.samples.slice(-UNREADY_WINDOW).some((s) => workerFault(s, i.sampleMs) !== null);
  if (failing) return 'failing';
  if (i.last.news !== newsOf(newest, i.sampleMs)) return 'news';
  if (i.now - i.last.at >= i.keepAliveMs) return 'keep-alive';
  return null;
};
