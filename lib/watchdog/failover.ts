import { ConflictError, describeError } from '../core/errors';
import { KEYS } from '../core/keys';
import { handoverFor, nextEpoch } from '../core/lease';
import { leaderSchema, type Leader } from '../core/schemas';
import { emptyCounter } from '../core/stall';
import { markFailover, type WatchdogAction } from '../core/watchdog';
import { makeEvent } from '../core/watchdog-events';
import type { StateStore } from '../aws/state-store';
import { emit, record, runAndWait } from './actions';
import type { WatchdogDeps } from './deps';

type FailoverAction = Extract<WatchdogAction, { kind: 'failover' }>;

/** What a promotion attempt found. */
export interface Promotion {
  ok: boolean;
  leader: Leader | null;
  detail: string;
}

/**
 * Moves the primary role from `from` to `to` by CAS, guarded by the epoch the decision was
 * made in: whoever loses the race, or comes late, changes nothing.
 */
export const promoteGuarded = async (
  store: StateStore,
  move: { from: string; to: string; fromEpoch: number; reason: string; outgoingStopped: boolean; changedBy?: string },
): Promise<Promotion> => {
  const { result } = await store.update(KEYS.leader, leaderSchema, (current) => {
    if (current !== null && current.epoch === move.fromEpoch && current.primary === move.from) {
      const next = nextEpoch(current, move.to, move.reason, move.changedBy ?? 'watchdog', handoverFor(current, move.outgoingStopped));
      return { value: next, result: { ok: true, leader: next, detail: 'promoted' } };
    }
    // Already moved: by an earlier attempt of this very failover, or by someone else.
    const ours = current !== null && current.primary === move.to && current.epoch > move.fromEpoch;
    return { value: null, result: { ok: ours, leader: current, detail: ours ? 'already promoted' : `superseded: the role moved to ${current?.primary ?? 'nobody'}` } };
  });
  return result;
};

/**
 * Carries out a claimed failover, each step idempotent so a resumed or duplicate run does no
 * harm: stop the old primary's worker (so the new one may start at once), promote the standby
 * by CAS on the epoch, start its worker, move the origin record, close the incident.
 */
export const failover = async (deps: WatchdogDeps, a: FailoverAction): Promise<void> => {
  const { step } = a;
  const spec = (name: string) => deps.config.nodes.find((n) => n.name === name);
  const from = spec(a.node);
  const to = spec(step.to);
  if (from === undefined || to === undefined) return;
  const incident = { id: a.incidentId, epoch: step.fromEpoch };
  const counter = emptyCounter();
  const waitMs = deps.config.commandWaitSeconds * 1000;
  let stopped = step.outgoingStopped;
  if (!stopped && step.stopOutgoing) {
    stopped = await runAndWait(deps, from.instanceId, 'stopWorker', `queen-fleet ${a.incidentId}`, waitMs);
    if (stopped) await emit(deps, makeEvent('OLD_PRIMARY_STOPPED', a.node, incident, counter, deps.now(), `${a.node}: worker stopped before the handover.`));
  }
  let promoted;
  try {
    promoted = await promoteGuarded(deps.store, { from: a.node, to: step.to, fromEpoch: step.fromEpoch, reason: `watchdog ${a.incidentId}: ${a.node} → ${step.to}`, outgoingStopped: stopped });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return;
  }
  if (!promoted.ok) {
    await record(deps, (s) => markFailover(s, a.node, a.incidentId, false, promoted.detail, deps.now()));
    return;
  }
  const newEpoch = promoted.leader?.epoch ?? step.fromEpoch + 1;
  const handover = promoted.leader?.handover ?? 'await-fence';
  await emit(
    deps,
    makeEvent('PROMOTED', a.node, incident, counter, deps.now(), `${step.to} is primary of epoch ${newEpoch} (${handover === 'immediate' ? 'starts at once' : 'starts once the old lease has lapsed'}).`, { newPrimary: step.to, newEpoch }),
  );
  await deps.commands.send(to.instanceId, 'startWorker', `queen-fleet ${a.incidentId}`).catch((error: unknown) => deps.log.warn({ err: describeError(error), node: step.to }, 'start command not delivered; the worker may already run'));
  if (deps.dns !== null && to.address !== undefined) {
    const moved = await deps.dns.pointTo(to.address, { timeoutMs: waitMs, pollMs: Math.max(20, waitMs / 20), sleep: deps.sleep });
    await emit(deps, makeEvent('RECORD_CHANGED', a.node, incident, counter, deps.now(), `origin record → ${to.address} (${step.to})${moved.insync ? '' : ', not yet in sync'}.`, { newPrimary: step.to, newEpoch }));
  }
  await record(deps, (s) => markFailover(s, a.node, a.incidentId, true, 'done', deps.now()));
};
