import { describeError, lostRace, ValidationError } from '../core/errors';
import { KEYS } from '../core/keys';
import { leaderSchema, type Leader } from '../core/schemas';
import { withoutRequest } from '../core/fleet/switchover';
import { readinessStep } from '../core/views/manual-failover';
import { planSwitchover, switchoverOutcome, switchoverRequest, type SwitchoverOutcome } from '../core/views/switchover';
import { observeHandover, type OpsDeps } from './observe';

export interface SwitchoverArgs {
  to: string;
  reason: string;
  /** `user@host` of the operator. */
  by: string;
  /** Go ahead with a target that is not ready (`--ignore-readiness`); never past a pause or a cordon. */
  force: boolean;
  dryRun?: boolean;
  /** How long to wait for the handover (ms); 0: record the request and return. */
  waitMs: number;
}

export interface SwitchoverStep {
  step: 'check' | 'request' | 'drain' | 'hand-over';
  status: 'ok' | 'warn' | 'fail' | 'skipped';
  detail: string;
}

/** The JSON document of `fleet switchover --json` (without `where`). */
export interface SwitchoverResult {
  /** True once the request is recorded (and, when waited for, the role was handed over). */
  ok: boolean;
  refused: string | null;
  id: string | null;
  from: string | null;
  to: string;
  fromEpoch: number | null;
  dryRun: boolean;
  overridden: string[];
  outcome: SwitchoverOutcome | null;
  steps: SwitchoverStep[];
}

/** The longest a switchover can take by the rules: a renewal to see the request, the drain, then looks to spare. */
export const switchoverBoundMs = (c: OpsDeps['config']): number =>
  (c.workerStopTimeoutSeconds * 1000) / 2 + 3 * c.leaseRenewSeconds * 1000;

/**
 * `fleet switchover --to NODE`: records the request on `leader.json` by CAS, only while the record
 * still names the primary and epoch the checks were made on; then (unless `waitMs` is 0) waits for
 * the primary to hand over, reading the record. The primary does the rest (agent/switchover.ts).
 */
export const requestSwitchover = async (deps: OpsDeps, req: SwitchoverArgs): Promise<SwitchoverResult> => {
  const { store, config } = deps;
  const plan = planSwitchover(await observeHandover(deps, req.to, req.force));
  if (plan.kind === 'unknown-node') throw new ValidationError(plan.message, '--to');
  const result: SwitchoverResult = {
    ...{ ok: false, refused: null, id: null, from: null, to: req.to, fromEpoch: null, overridden: [] },
    ...{ dryRun: req.dryRun === true, outcome: null, steps: [] },
  };
  const step = (s: SwitchoverStep['step'], status: SwitchoverStep['status'], detail: string): void =>
    void result.steps.push({ step: s, status, detail });
  if (plan.kind === 'refuse') {
    step('check', 'fail', plan.message);
    return { ...result, refused: plan.message };
  }
  Object.assign(result, { id: plan.id, from: plan.from, fromEpoch: plan.fromEpoch, overridden: plan.overridden });
  const check = readinessStep(plan);
  step('check', check.status, check.detail);
  const drainS = config.workerStopTimeoutSeconds / 2;
  const planned: [SwitchoverStep['step'], string][] = [
    ['request', `record switchover ${plan.id} on leader.json, by CAS on ${plan.from} at epoch ${plan.fromEpoch}`],
    ['drain', `${plan.from} takes no new task; its stages reach their checkpoint (at most ${drainS} s)`],
    ['hand-over', `${plan.from} writes epoch ${plan.fromEpoch + 1} naming ${plan.to}, who carries on at once`],
  ];
  if (req.dryRun === true) {
    for (const [s, detail] of planned) step(s, 'skipped', `would ${detail}`);
    return result;
  }
  const request = switchoverRequest(plan, req.by, req.reason);
  const written = await store
    .update(KEYS.leader, leaderSchema, (current: Leader | null) => {
      const same = current !== null && current.primary === plan.from && current.epoch === plan.fromEpoch;
      if (!same || current.switchover !== undefined) return { value: null, result: current };
      return { value: { ...current, switchover: request }, result: current };
    })
    .catch((error: unknown) => {
      if (lostRace(error)) return { written: false, result: null };
      throw error;
    });
  if (!written.written) {
    const found = written.result;
    const why =
      found === null
        ? 'leader.json could not be changed'
        : found.switchover !== undefined
          ? `switchover ${found.switchover.id} is pending`
          : `leader.json now names ${found.primary} at epoch ${found.epoch}`;
    const refused = `the role moved meanwhile, or another request came first: ${why}; nothing was changed`;
    step('request', 'fail', refused);
    return { ...result, refused };
  }
  step('request', 'ok', `switchover ${plan.id} recorded; ${plan.from} sees it at its next renewal`);
  result.ok = true;
  if (req.waitMs <= 0) return { ...result, outcome: { kind: 'pending' } };
  return waitForHandover(deps, result, req.waitMs, step);
};

/** Reads the record until the request is handed over, dropped or the wait is over. */
const waitForHandover = async (
  deps: OpsDeps,
  result: SwitchoverResult,
  waitMs: number,
  step: (s: SwitchoverStep['step'], status: SwitchoverStep['status'], detail: string) => void,
): Promise<SwitchoverResult> => {
  const id = result.id ?? '';
  const fromEpoch = result.fromEpoch ?? 0;
  const pollMs = (deps.config.leaseRenewSeconds * 1000) / 8;
  let outcome: SwitchoverOutcome = { kind: 'pending' };
  for (let waited = 0; waited <= waitMs; waited += pollMs) {
    const got = await deps.store.read(KEYS.leader, leaderSchema).catch(() => undefined);
    if (got !== undefined) outcome = switchoverOutcome(id, fromEpoch, got?.value ?? null);
    if (outcome.kind !== 'pending') break;
    await deps.sleep(pollMs);
  }
  result.outcome = outcome;
  if (outcome.kind === 'handed-over') {
    const timedOut = outcome.handover !== 'immediate';
    step(
      'hand-over',
      timedOut ? 'warn' : 'ok',
      timedOut
        ? `${outcome.to} is primary of epoch ${outcome.epoch} after the drain timed out: it starts once the old ` +
            `lease has lapsed (${outcome.reason})`
        : `${outcome.to} is primary of epoch ${outcome.epoch}, drained to checkpoints and handed over at once`,
    );
    return result;
  }
  result.ok = false;
  const detail =
    outcome.kind === 'moved'
      ? `the role moved another way: ${outcome.primary} is primary of epoch ${outcome.epoch}`
      : outcome.kind === 'dropped'
        ? `${result.from} dropped the request (target cordoned or fleet paused since; its log says why)`
        : `not handed over within ${Math.round(waitMs / 1000)} s: still pending ` +
          `(fleet switchover --cancel withdraws it)`;
  step('hand-over', 'fail', detail);
  return result;
};

/** `fleet switchover --cancel`: removes a pending request by CAS; the primary, if draining, carries on. */
export const cancelSwitchover = async (deps: OpsDeps): Promise<{ cancelled: string | null; detail: string }> => {
  const { result } = await deps.store
    .update(KEYS.leader, leaderSchema, (current: Leader | null) =>
      current?.switchover === undefined
        ? { value: null, result: null }
        : { value: withoutRequest(current), result: current.switchover.id },
    )
    .catch((error: unknown) => {
      throw new Error(`leader.json not changed: ${describeError(error)}`);
    });
  return result === null
    ? { cancelled: null, detail: 'no switchover is pending' }
    : { cancelled: result, detail: `switchover ${result} withdrawn; the primary carries on at its next renewal` };
};
