import type { Leader, SwitchoverRequest } from '../schemas';
import { nextEpoch, type LeaseTiming } from './lease';

/**
 * A planned handover of the primary role (`fleet switchover --to NODE`), on the lease itself: an
 * operator records the request on `leader.json` by CAS for its holder and epoch; the primary sees
 * it at its next renewal, stops taking messages, lets its running stages reach their checkpoint,
 * and writes the next epoch naming the target. The target's fitness is judged once, before the
 * drain: the operator's readiness check, then the primary's own look at the maintenance switches.
 * Pure: every time is the primary's own monotonic clock, from when it first saw the request.
 *
 * Drained means: the worker holds no task and has no receive open. Each running task stopped at
 * a stage boundary, after that stage's checkpoint (or completed, when it was the last stage), and
 * its message went back to the queue under the old lease, so the new primary resumes it from
 * that checkpoint and no stage runs twice. Once draining, the primary never takes a message again
 * under this lease: it hands over, or learns from the record that it did.
 */
export interface Handing {
  id: string;
  to: string;
  /** When this primary first saw the request. */
  seenAt: number;
  /** When it began to drain, or null before. */
  drainFrom: number | null;
}

export interface HandingTiming extends LeaseTiming {
  /** How long the drain may wait for stages to reach their checkpoint (half the worker's stop timeout). */
  drainMs: number;
}

export type HandoverStep =
  | { kind: 'none' }
  /** Not seen yet: keep consuming. */
  | { kind: 'wait' }
  /** Take no new message; running stages go on to their checkpoint. */
  | { kind: 'drain' }
  /** Write the next epoch naming the target: `immediate` once drained, `await-fence` when the drain timed out. */
  | { kind: 'hand-over'; to: string; handover: Leader['handover']; why: string }
  /** Remove the request from the record and carry on as primary. */
  | { kind: 'drop'; why: string };

/** The request this node, as primary of `leader`, has to act on, or null. */
const requestFor = (me: string, leader: Leader | null): SwitchoverRequest | null =>
  leader === null || leader.primary !== me ? null : (leader.switchover ?? null);

/** Folds the record into what the primary knows of its request: a new id starts afresh, none clears it. */
export const observeRequest = (me: string, leader: Leader | null, h: Handing | null, now: number): Handing | null => {
  const req = requestFor(me, leader);
  if (req === null) return null;
  if (h !== null && h.id === req.id) return h;
  return { id: req.id, to: req.to, seenAt: now, drainFrom: null };
};

/**
 * The primary's next step on a request, from what it knows now, whether its worker has drained,
 * and `held`: why the target may not take the role (the fleet paused, the target cordoned), or null.
 */
export const planHandover = (
  me: string,
  leader: Leader | null,
  h: Handing | null,
  now: number,
  t: HandingTiming,
  drained: boolean,
  held: string | null,
): HandoverStep => {
  const req = requestFor(me, leader);
  if (req === null || leader === null) return { kind: 'none' };
  if (req.epoch !== leader.epoch)
    return { kind: 'drop', why: `stale: made for epoch ${req.epoch}, not ${leader.epoch}` };
  if (req.to === me) return { kind: 'drop', why: `it names the primary ${me} itself` };
  if (h === null || h.id !== req.id) return { kind: 'wait' };
  if (h.drainFrom === null) return held === null ? { kind: 'drain' } : { kind: 'drop', why: held };
  if (drained) return { kind: 'hand-over', to: req.to, handover: 'immediate', why: 'drained' };
  if (now - h.drainFrom >= t.drainMs)
    return {
      kind: 'hand-over',
      to: req.to,
      handover: 'await-fence',
      why: `drain timed out after ${Math.round(t.drainMs / 100) / 10} s (a stage had not reached its checkpoint)`,
    };
  return { kind: 'drain' };
};

/** Applies a step's effect on the primary's own knowledge: a drain starts its clock once. */
export const startDrain = (h: Handing, now: number): Handing => (h.drainFrom === null ? { ...h, drainFrom: now } : h);

/** The record of the next epoch, naming the target; the request is consumed by it. */
export const handoverRecord = (leader: Leader, me: string, step: Extract<HandoverStep, { kind: 'hand-over' }>) => {
  const req = leader.switchover;
  const reason = `switchover ${req?.id ?? '?'}: ${me} → ${step.to} (${step.why}): ${req?.reason ?? ''}`;
  return nextEpoch(withoutRequest(leader), step.to, reason, me, step.handover);
};

/** The record without its request (a dropped request, or a renewal after one). */
export const withoutRequest = (leader: Leader): Leader => {
  const rest = { ...leader };
  delete rest.switchover;
  return rest;
};

/** Whether this node is the target of the live request on the record: it reads the record often while so. */
export const targetOf = (me: string, leader: Leader | null): SwitchoverRequest | null => {
  const req = leader?.switchover;
  return req !== undefined && leader !== null && req.to === me && leader.primary !== me && req.epoch === leader.epoch
    ? req
    : null;
};
