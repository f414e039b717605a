import type { NodeSpec } from '../config';
import type { Heartbeat, Leader, Sample } from '../schemas';
import { isLost, type BeatRef, type Beats } from './membership';
import type { NodeWatch } from './watchdog-state';

/** Readiness: whether a standby could take the work over now, by its own samples. */

/** Sample intervals within which a standby's worker must have passed its self-test. */
export const PROOF_INTERVALS = 4;

/** The worker proved recently that it works (a self-test through its stages), by its sample. */
export const isProven = (last: { proofAgeMs?: number | null | undefined }, sampleMs: number): boolean =>
  last.proofAgeMs !== undefined && last.proofAgeMs !== null && last.proofAgeMs <= PROOF_INTERVALS * sampleMs;

/** What keeps a standby's worker from being ready, by one sample: no worker process, or no recent self-test. */
export type WorkerFault = 'no-worker' | 'unproven';

export const workerFault = (s: Sample, sampleMs: number): WorkerFault | null =>
  s.workerProcesses === 0 ? 'no-worker' : isProven(s, sampleMs) ? null : 'unproven';

/**
 * Samples in a row that must find a standby's worker not ready before the watchdog restarts it:
 * two whole sample intervals, in which a worker that just started or stopped runs its self-test.
 */
export const UNREADY_SAMPLES = 3;

/** Why a node's worker has not been ready for UNREADY_SAMPLES samples in a row (the newest one's fault), or null. */
export const unreadyWorker = (hb: Heartbeat, sampleMs: number): WorkerFault | null => {
  const last = hb.samples.slice(-UNREADY_SAMPLES);
  if (last.length < UNREADY_SAMPLES) return null;
  const faults = last.map((s) => workerFault(s, sampleMs));
  // A live worker that consumed proved itself by its work and self-tests only once it stops (a
  // switchover's old primary): its samples from then on decide, not those it took as primary.
  if (faults.at(-1) === 'unproven' && last.some((s) => s.mayConsume === true)) return null;
  return faults.every((f) => f !== null) ? (faults.at(-1) ?? null) : null;
};

/** The nodes whose beat says they cannot reach S3 or SQS: no failover goes to them. */
export const cannotWork = (beats: Beats | undefined): ReadonlySet<string> =>
  new Set(
    [...(beats ?? new Map<string, BeatRef>())]
      .filter(([, b]) => (b.unreachable ?? []).some((s) => s === 's3' || s === 'sqs'))
      .map(([n]) => n),
  );

export interface StandbyInput {
  nodes: readonly NodeSpec[];
  watches: Readonly<Record<string, NodeWatch>>;
  heartbeats: ReadonlyMap<string, Heartbeat>;
  leader: Leader;
  now: number;
  sampleMs: number;
  lostMs: number;
  /** Nodes out of rotation whatever their samples: cordoned ones, and those that cannot reach their stores. */
  unready: ReadonlySet<string>;
}

/**
 * Standbys that could take over now, best first: not lost, a live worker that passed its
 * self-test, synced to the current epoch, not claiming the role, no incident open but a lost
 * standby's or a rejoin's; then by priority, then one outside the primary's zone, then by name.
 */
export const readyStandbys = (i: StandbyInput): NodeSpec[] => {
  const primaryZone = i.nodes.find((n) => n.name === i.leader.primary)?.zone;
  const sameZone = (spec: NodeSpec): number => (primaryZone !== undefined && spec.zone === primaryZone ? 1 : 0);
  return i.nodes
    .filter((spec) => {
      if (spec.name === i.leader.primary || i.unready.has(spec.name)) return false;
      const watch = i.watches[spec.name];
      const hb = i.heartbeats.get(spec.name);
      const last = hb?.samples.at(-1);
      if (watch === undefined || hb === undefined || last === undefined || isLost(watch, i.now, i.lostMs)) return false;
      const incident = watch.incident?.kind ?? null;
      const role = hb.role === 'standby' || hb.role === 'fenced';
      const open = incident === null || incident === 'standby' || incident === 'rejoin';
      return role && workerFault(last, i.sampleMs) === null && last.epochSeen === i.leader.epoch && open;
    })
    .sort((a, b) => a.priority - b.priority || sameZone(a) - sameZone(b) || a.name.localeCompare(b.name));
};
