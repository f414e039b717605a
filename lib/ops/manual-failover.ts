import { CorruptObjectError, describeError, lostRace, ValidationError } from '../core/errors';
import { KEYS } from '../core/keys';
import type { NodeSpec } from '../core/config';
import {
  leaderReason,
  plannedSteps,
  planManualFailover,
  promotedSummary,
  readinessStep,
  type ManualFailoverPlan,
} from '../core/views/manual-failover';
import { leaderSchema, type Leader } from '../core/schemas';
import { emptyCounter, type StallCounter } from '../core/fleet/stall';
import { makeEvent } from '../core/fleet/watchdog-events';
import { noteManualFailover } from '../core/fleet/outcomes';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import { emit, runAndWait } from '../control/watchdog/actions';
import { promoteGuarded, takeOver, type Promotion } from '../control/watchdog/failover';
import { observeHandover, observeObject, type OpsDeps } from './observe';

export interface FailoverRequest {
  to: string;
  reason: string;
  /** Go ahead with a target that is not ready (`--ignore-readiness`). */
  force: boolean;
  /** Only check and list the steps: nothing is changed (`--dry-run`). */
  dryRun?: boolean;
}

export type FailoverStepOutcome = 'ok' | 'warn' | 'fail' | 'skipped';

/** One thing the failover did (or could not do), in order. */
export interface FailoverLogEntry {
  step:
    | 'check'
    | 'stop-old-worker'
    | 'promote'
    | 'cooldown'
    | 'restart-old-worker'
    | 'event'
    | 'start-worker'
    | 'origin-record';
  status: FailoverStepOutcome;
  detail: string;
}

/** The JSON document of `fleet failover --json` (without `where`). */
export interface FailoverResult {
  /** True once leader.json names the new primary. */
  ok: boolean;
  /** Why nothing was moved; null when the role moved. */
  refused: string | null;
  from: string | null;
  to: string;
  /** The operator's reason, as written to leader.json and the PROMOTED event. */
  reason: string;
  fromEpoch: number | null;
  newEpoch: number | null;
  handover: Leader['handover'] | null;
  incidentId: string | null;
  forced: boolean;
  /** A dry run: the steps were listed, none was taken. */
  dryRun: boolean;
  /** Readiness objections that --ignore-readiness overrode. */
  overridden: string[];
  steps: FailoverLogEntry[];
}

type Go = Extract<ManualFailoverPlan, { kind: 'go' }>;
type StepLog = (step: FailoverLogEntry['step'], status: FailoverStepOutcome, detail: string) => void;

const promote = async (deps: OpsDeps, move: Parameters<typeof promoteGuarded>[1]): Promise<Promotion> => {
  try {
    return await promoteGuarded(deps.store, move);
  } catch (error) {
    // Lost every CAS round, or the record turned unreadable: either way it is not ours to move.
    if (lostRace(error) || error instanceof CorruptObjectError)
      return { ok: false, leader: null, detail: describeError(error) };
    throw error;
  }
};

/** Stops the old primary's worker and waits for the result: true only when confirmed. */
const stopOldWorker = async (deps: OpsDeps, plan: Go, from: NodeSpec | undefined, step: StepLog): Promise<boolean> => {
  const lapse = `${plan.to} waits for the old lease to lapse`;
  if (from === undefined) {
    step('stop-old-worker', 'warn', `${plan.from} is not a configured node: its worker cannot be stopped; ${lapse}`);
    return false;
  }
  const stopped = await runAndWait(
    deps,
    from,
    'stopWorker',
    `queen-fleet ${plan.incidentId}`,
    deps.config.commandWaitSeconds * 1000,
  );
  if (stopped)
    step('stop-old-worker', 'ok', `${plan.from}: worker stopped (${from.instanceId ?? 'found by its role'})`);
  else
    step(
      'stop-old-worker',
      'warn',
      `${plan.from}: worker not confirmed stopped (the command was not delivered, failed, or had no result ` +
        `within ${deps.config.commandWaitSeconds} s); ${lapse}`,
    );
  return stopped;
};

/** Nothing moved, so the stop was for nothing: primary or standby, a node runs its worker. */
const giveBackWorker = async (deps: OpsDeps, plan: Go, from: NodeSpec, step: StepLog): Promise<void> => {
  try {
    await deps.commands.send(from, 'startWorker', `queen-fleet ${plan.incidentId}`);
    step('restart-old-worker', 'ok', `${plan.from}: start command sent`);
  } catch (error) {
    step(
      'restart-old-worker',
      'fail',
      `${plan.from}: start command not delivered (${describeError(error)}): run sudo systemctl start ` +
        `queen-fleet-worker on it`,
    );
  }
};

/** After the move, like the watchdog: announce it once, start the new worker, move the record. */
const carryOutFailover = async (
  deps: OpsDeps,
  plan: Go,
  o: { to: NodeSpec; leader: Leader; summary: string; counter: StallCounter },
  step: StepLog,
): Promise<void> => {
  const { to, leader } = o;
  const incident = { id: plan.incidentId, epoch: plan.fromEpoch };
  const extra = { newPrimary: plan.to, newEpoch: leader.epoch };
  try {
    await emit(deps, makeEvent('PROMOTED', plan.from, incident, o.counter, deps.now(), o.summary, extra));
    step(
      'event',
      'ok',
      `events/${plan.incidentId}/PROMOTED.json ` +
        `written${deps.alerts === null ? ' (no topic configured: not alerted)' : ' and alerted'}`,
    );
  } catch (error) {
    step('event', 'fail', `PROMOTED event not written: ${describeError(error)}`);
  }
  const done = await takeOver(deps, { incident, from: plan.from, to, newEpoch: leader.epoch, counter: o.counter });
  if (done.started.ok) step('start-worker', 'ok', `${plan.to}: start command sent (${done.started.commandId})`);
  else
    step(
      'start-worker',
      'warn',
      `${plan.to}: start command not delivered (${describeError(done.started.error)}); the worker may run already`,
    );
  if (done.record === null) return step('origin-record', 'skipped', 'no Route 53 record configured');
  if (!done.record.ok)
    return step('origin-record', 'fail', `origin record not moved: ${describeError(done.record.error)}`);
  const lag = done.record.insync ? '' : ', not yet in sync';
  step(
    'origin-record',
    done.record.insync ? 'ok' : 'warn',
    `${deps.config.recordName ?? 'origin'} → ${to.address ?? '?'}${done.record.changed ? '' : ' (already)'}${lag}`,
  );
};

/**
 * A manual failover, in the watchdog's order (lib/control/watchdog/failover.ts): stop the old primary's
 * worker and wait for the result, then move the role by CAS from the primary and epoch read at
 * the start, granting an immediate handover only if the stop was confirmed; then announce it,
 * start the new primary's worker and move the origin record. Refusals change nothing.
 */
export const manualFailover = async (deps: OpsDeps, req: FailoverRequest): Promise<FailoverResult> => {
  const { store, config } = deps;
  const input = await observeHandover(deps, req.to, req.force);
  const plan = planManualFailover(input);
  const { watchdog } = input;
  if (plan.kind === 'unknown-node') throw new ValidationError(plan.message, '--to');
  const result: FailoverResult = {
    ok: false,
    refused: null,
    from: null,
    to: req.to,
    reason: req.reason,
    fromEpoch: null,
    newEpoch: null,
    handover: null,
    incidentId: null,
    forced: req.force,
    dryRun: req.dryRun === true,
    overridden: [],
    steps: [],
  };
  const step: StepLog = (s, status, detail) => void result.steps.push({ step: s, status, detail });
  if (plan.kind === 'refuse') {
    step('check', 'fail', plan.message);
    return { ...result, refused: plan.message };
  }
  Object.assign(result, {
    from: plan.from,
    fromEpoch: plan.fromEpoch,
    incidentId: plan.incidentId,
    overridden: plan.overridden,
  });
  const forced = plan.overridden.length > 0;
  const check = readinessStep(plan);
  step('check', check.status, check.detail);
  if (req.dryRun === true) {
    const record = deps.dns === null ? null : (config.recordName ?? 'the origin record');
    const o = {
      commandWaitSeconds: config.commandWaitSeconds,
      cooldownSeconds: config.failoverCooldownSeconds,
      record,
    };
    for (const s of plannedSteps(plan, o)) step(s.step, 'skipped', `would ${s.detail}`);
    return result;
  }
  const from = config.nodes.find((n) => n.name === plan.from);
  const to = config.nodes.find((n) => n.name === plan.to);
  if (to === undefined) throw new Error(`planned target ${plan.to} is not configured`);

  const stopped = await stopOldWorker(deps, plan, from, step);
  const promoted = await promote(deps, {
    from: plan.from,
    to: plan.to,
    fromEpoch: plan.fromEpoch,
    reason: leaderReason(plan, req.reason),
    outgoingStopped: stopped,
    changedBy: 'operator',
  });
  if (!promoted.ok || promoted.detail !== 'promoted' || promoted.leader === null) {
    const found = promoted.leader;
    const now = found === null ? promoted.detail : `leader.json now names ${found.primary} at epoch ${found.epoch}`;
    const refused = `the role moved meanwhile: ${now}; nothing was changed`;
    step('promote', 'fail', refused);
    // Give the stopped worker back only while its node still holds the role it held: if the
    // role moved, the new primary may have been granted an immediate start because of that stop.
    const after = await observeObject(store, KEYS.leader, leaderSchema);
    const unchanged = after.state === 'ok' && after.value.primary === plan.from && after.value.epoch === plan.fromEpoch;
    if (stopped && from !== undefined && unchanged) await giveBackWorker(deps, plan, from, step);
    else if (stopped)
      step('restart-old-worker', 'skipped', `${plan.from} no longer holds the role it had: its worker stays stopped`);
    return { ...result, refused };
  }
  const { epoch: newEpoch, handover } = promoted.leader;
  Object.assign(result, { ok: true, newEpoch, handover });
  const when =
    handover === 'immediate' ? '' : ` (it starts within ${config.leaseExpirySeconds} s, once the old lease has lapsed)`;
  step('promote', 'ok', `leader.json: ${plan.to} is primary of epoch ${newEpoch}, handover ${handover}${when}`);
  await deps.store
    .update(KEYS.watchdogState, watchdogStateSchema, (current) => ({
      value: current === null ? null : noteManualFailover(current, plan.from, deps.now(), !forced),
      result: null,
    }))
    .then(
      () =>
        step(
          'cooldown',
          'ok',
          forced
            ? `forced: no cooldown, so the watchdog may fail over at once if ${plan.to} does not take ` +
                `over; ${plan.from}'s open incident is closed`
            : `the watchdog's failover cooldown (${config.failoverCooldownSeconds} s) runs from now; ${plan.from}'s ` +
                `open incident is closed`,
        ),
      (error: unknown) =>
        step(
          'cooldown',
          'warn',
          `watchdog state not updated (${describeError(error)}): it may fail over again within its cooldown`,
        ),
    );
  const counter = (watchdog.state === 'ok' ? watchdog.value.nodes[plan.from]?.counter : undefined) ?? emptyCounter();
  const summary = promotedSummary(plan, { reason: req.reason, newEpoch, handover, outgoingStopped: stopped });
  await carryOutFailover(deps, plan, { to, leader: promoted.leader, summary, counter }, step);
  return result;
};
