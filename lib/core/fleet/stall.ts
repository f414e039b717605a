import { z } from 'zod';
import { sampleSchema, type Sample } from '../schemas';

const SAMPLE_FAULTS = ['no-worker', 'no-progress'] as const;

/** Why a sample failed, or `null` when it is healthy. */
export type SampleFault = (typeof SAMPLE_FAULTS)[number];

const totalBacklog = (s: Sample): number | null => s.backlog;

/** True when some in-flight task advanced between the two samples, or a new one started. */
const madeProgress = (prev: Sample, cur: Sample): boolean => {
  const before = new Map(prev.inFlight.map((t) => [t.taskId, t]));
  return cur.inFlight.some((t) => {
    const old = before.get(t.taskId);
    if (old === undefined) return true;
    if (t.progress > old.progress) return true;
    return t.stageCpuMs !== undefined && old.stageCpuMs !== undefined && t.stageCpuMs > old.stageCpuMs;
  });
};

/**
 * A sample that says nothing of a stall either way: its worker lives but may not consume (the
 * lease decides then), or it could not see its backlog or reach the stores its work needs.
 * It is neither a failing sample nor a healthy one.
 */
export const isUnjudged = (s: Sample): boolean =>
  s.workerProcesses > 0 &&
  ((s.consumingEpoch === null && s.mayConsume !== true) || s.backlog === null || s.unreachable !== undefined);

/**
 * Judges one sample against the one before it. A sample fails when no
 * worker process is alive, or when the worker consumes and the backlog is non-zero and not
 * shrinking while, since the previous sample, no task completed and no in-flight task made
 * progress. Without a previous sample only the process check applies: absence of evidence is
 * not a stall.
 */
export const judgeSample = (prev: Sample | undefined, cur: Sample): SampleFault | null => {
  if (cur.workerProcesses === 0) return 'no-worker';
  // A worker that may not consume (its lease lapsed or not yet released) is waiting, not stuck:
  // the lease decides who works then, not a restart. A frozen worker still reports its epoch;
  // one that froze before its first poll reports none, but its agent says it may consume.
  if (cur.consumingEpoch === null && cur.mayConsume !== true) return null;
  if (prev === undefined) return null;
  const backlog = totalBacklog(cur);
  const before = totalBacklog(prev);
  if (backlog === null || backlog === 0) return null;
  if (before !== null && backlog < before) return null;
  if (cur.completedTotal > prev.completedTotal) return null;
  if (madeProgress(prev, cur)) return null;
  return 'no-progress';
};

/** Per-node running judgement the watchdog keeps between invocations (stored in its state). */
export const stallCounterSchema = z.object({
  /** Boot id of the agent whose samples were last judged. */
  boot: z.string().nullable(),
  /** Highest sample sequence number already judged. */
  lastSeq: z.number().int().min(-1),
  /** The last judged sample, the baseline for the next one. */
  last: sampleSchema.nullable(),
  /** Consecutive failing samples. */
  failing: z.number().int().min(0),
  /** Consecutive healthy samples, all of one worker process (`last.worker`). */
  healthy: z.number().int().min(0),
  /** Fault of the most recent failing sample. */
  lastFault: z.enum(SAMPLE_FAULTS).nullable(),
});
export type StallCounter = z.output<typeof stallCounterSchema>;

export const emptyCounter = (): StallCounter => ({
  boot: null,
  lastSeq: -1,
  last: null,
  failing: 0,
  healthy: 0,
  lastFault: null,
});

/**
 * Feeds the samples of one heartbeat into a counter: only samples not judged before count,
 * so re-reading the same heartbeat (a duplicate or concurrent invocation) changes nothing.
 * A new agent boot starts a fresh baseline without resetting the failing count. A run of
 * healthy samples is one worker's: a sample of another worker starts the run again.
 */
export const advanceCounter = (counter: StallCounter, boot: string, samples: readonly Sample[]): StallCounter => {
  let next: StallCounter = counter.boot === boot ? { ...counter } : { ...counter, boot, lastSeq: -1, last: null };
  const fresh = samples.filter((s) => s.seq > next.lastSeq).sort((a, b) => a.seq - b.seq);
  for (const sample of fresh) {
    if (isUnjudged(sample)) {
      next = { ...next, lastSeq: sample.seq, last: sample };
      continue;
    }
    const fault = judgeSample(next.last ?? undefined, sample);
    // A healthy run belongs to one worker process: a new worker starts it again.
    const sameWorker = next.last === null || next.last.worker === sample.worker;
    next =
      fault === null
        ? { ...next, failing: 0, healthy: sameWorker ? next.healthy + 1 : 1, lastFault: null }
        : { ...next, failing: next.failing + 1, healthy: 0, lastFault: fault };
    next.lastSeq = sample.seq;
    next.last = sample;
  }
  return next;
};

/** True once the counter reached the configured number of consecutive failing samples. */
export const isStalled = (counter: StallCounter, stallSamples: number): boolean => counter.failing >= stallSamples;
