import { describeError, lostRace } from '../../core/errors';
import { KEYS } from '../../core/keys';
import { handoverFor, nextEpoch } from '../../core/fleet/lease';
import { leaderSchema, type Leader } from '../../core/schemas';
import type { NodeSpec } from '../../core/config';
import { emptyCounter, type StallCounter } from '../../core/fleet/stall';
import { markFailover } from '../../core/fleet/outcomes';
import type { WatchdogAction } from '../../core/fleet/watchdog';
import { makeEvent } from '../../core/fleet/watchdog-events';
import type { StateStore } from '../../aws/state-store';
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
      const next = nextEpoch(
        current,
        move.to,
        move.reason,
        move.changedBy ?? 'watchdog',
        handoverFor(current, move.outgoingStopped),
      );
      return { value: next, result: { ok: true, leader: next, detail: 'promoted' } };
    }
    // Already moved: by an earlier attempt of this very failover, or by someone else.
    const ours = current !== null && current.primary === move.to && current.epoch > move.fromEpoch;
    return {
      value: null,
      result: {
        ok: ours,
        leader: current,
        detail: ours ? 'already promoted' : `superseded: the role moved to ${current?.primary ?? 'nobody'}`,
      },
    };
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
    stopped = await runAndWait(deps, from, 'stopWorker', `queen-fleet ${a.incidentId}`, waitMs);
    if (stopped)
      await emit(
        deps,
        makeEvent(
          'OLD_PRIMARY_STOPPED',
          a.node,
          incident,
          counter,
          deps.now(),
          `${a.node}: worker stopped before the handover.`,
        ),
      );
  }
  let promoted;
  try {
    promoted = await promoteGuarded(deps.store, {
      from: a.node,
      to: step.to,
      fromEpoch: step.fromEpoch,
      reason: `watchdog ${a.incidentId}: ${a.node} → ${step.to}`,
      outgoingStopped: stopped,
    });
  } catch (error) {
    if (!lostRace(error)) throw error;
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
    makeEvent(
      'PROMOTED',
      a.node,
      incident,
      counter,
      deps.now(),
      `${step.to} is primary of epoch ${newEpoch} ` +
        `(${handover === 'immediate' ? 'starts at once' : 'starts once the old lease has lapsed'}).`,
      { newPrimary: step.to, newEpoch },
    ),
  );
  const done = await takeOver(deps, { incident, from: a.node, to, newEpoch, counter });
  if (!done.started.ok)
    deps.log.warn(
      { err: describeError(done.started.error), node: step.to },
      'start command not delivered; the worker may already run',
    );
  // The incident stays claimed, so the next run resumes the failover and moves the record.
  if (done.record?.ok === false) throw done.record.error;
  await record(deps, (s) => markFailover(s, a.node, a.incidentId, true, 'done', deps.now()));
};

/** What handing the work to a new primary did: its worker started, the origin record moved. */
export interface TakeOver {
  started: { ok: true; commandId: string } | { ok: false; error: unknown };
  /** Null when no origin record is configured (or the node has no address). */
  record: { ok: true; changed: boolean; insync: boolean } | { ok: false; error: unknown } | null;
}

/**
 * After a promotion, the watchdog's or an operator's: start the new primary's worker and move
 * the origin record, announcing the move once (RECORD_CHANGED). Never throws: each caller
 * decides what a failed step means (the watchdog retries, `fleet failover` reports).
 */
export const takeOver = async (
  deps: WatchdogDeps,
  o: { incident: { id: string; epoch: number }; from: string; to: NodeSpec; newEpoch: number; counter: StallCounter },
): Promise<TakeOver> => {
  let started: TakeOver['started'];
  try {
    started = {
      ok: true,
      commandId: await deps.commands.send(o.to, 'startWorker', `queen-fleet ${o.incident.id}`),
    };
  } catch (error) {
    started = { ok: false, error };
  }
  if (deps.dns === null || o.to.address === undefined) return { started, record: null };
  const waitMs = deps.config.commandWaitSeconds * 1000;
  try {
    const moved = await deps.dns.pointTo(o.to.address, {
      timeoutMs: waitMs,
      pollMs: Math.max(20, waitMs / 20),
      sleep: deps.sleep,
    });
    const summary = `origin record → ${o.to.address} (${o.to.name})${moved.insync ? '' : ', not yet in sync'}.`;
    await emit(
      deps,
      makeEvent('RECORD_CHANGED', o.from, o.incident, o.counter, deps.now(), summary, {
        newPrimary: o.to.name,
        newEpoch: o.newEpoch,
      }),
    );
    return { started, record: { ok: true, changed: moved.changed, insync: moved.insync } };
  } catch (error) {
    return { started, record: { ok: false, error } };
  }
};
