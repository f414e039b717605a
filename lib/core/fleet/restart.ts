import type { NodeSpec } from '../config';
import type { Incident } from './incident';
import { next, outstandingRestart } from './incident-pending';
import { move, timing, type LadderContext } from './ladder-context';
import type { NodeWatch } from './watchdog-state';

/** The restart steps every incident kind shares: claim within the hourly budget, send, verify. */

const HOUR_MS = 3_600_000;

/** Restarts that count against a node's hourly budget: the ladder's own, or those that make a standby rejoin. */
export type Budget = 'restartTimes' | 'rejoinTimes';

export const budgetOf = (incident: Incident): Budget => (incident.kind === 'rejoin' ? 'rejoinTimes' : 'restartTimes');

/** The budget's restarts within the last hour. */
export const recentRestarts = (ctx: LadderContext, watch: NodeWatch, budget: Budget): number[] =>
  watch[budget].filter((t) => ctx.now - t < HOUR_MS);

/** Sends the restart the incident just claimed, within the hourly budget. */
export const claimRestart = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const incident = watch.incident;
  if (incident?.stage.name !== 'restart-claimed' || incident.restart === null) return watch;
  const budget = budgetOf(incident);
  const recent = recentRestarts(ctx, watch, budget);
  if (recent.length >= ctx.settings.restartBudgetPerHour) {
    const rejoin = budget === 'rejoinTimes';
    const summary =
      `${spec.name}: ${recent.length} ${rejoin ? 'rejoin restarts' : 'restarts'} in the last hour, ` +
      `budget ${ctx.settings.restartBudgetPerHour}.${rejoin ? ' It stays out of the standby pool.' : ''}`;
    return { ...move(ctx, spec, watch, { kind: 'RESTART_BUDGET_EXHAUSTED', at: ctx.now }, summary), [budget]: recent };
  }
  // Paused: the claim stands unsent, and the claim-overdue rule below sends it once the pause ends.
  if (ctx.paused !== true)
    ctx.actions.push({
      kind: 'command',
      node: spec.name,
      instanceId: spec.instanceId,
      incidentId: incident.id,
      command: incident.restart.command,
    });
  return { ...watch, counter: { ...watch.counter, failing: 0, healthy: 0 }, [budget]: [...recent, ctx.now] };
};

/** Moves a restart along: a claim nobody sent is sent, a sent one is verified (in whatever stage). */
export const progressRestart = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const incident = watch.incident;
  if (incident === null) return watch;
  const pending = next(incident, timing(ctx), ctx.now);
  // The send may have gone out while its record did not land (S3 throttled, the run died): SSM knows.
  // Claimed anew, so two runs that both find it overdue race on the state and one sends.
  if (pending.kind === 'send-restart' && pending.overdue && incident.restart !== null && ctx.paused !== true) {
    ctx.actions.push({
      kind: 'find-restart',
      node: spec.name,
      instanceId: spec.instanceId,
      incidentId: incident.id,
      command: incident.restart.command,
    });
    // The samples start over with the restart, as when a claim is sent at once.
    const counter = { ...watch.counter, failing: 0, healthy: 0 };
    return { ...watch, counter, incident: { ...incident, restart: { ...incident.restart, claimedAt: ctx.now } } };
  }
  const verify = outstandingRestart(incident, timing(ctx));
  if (verify !== null)
    ctx.actions.push({
      kind: 'verify',
      node: spec.name,
      instanceId: spec.instanceId,
      incidentId: incident.id,
      commandId: verify.commandId,
      deadline: verify.deadline,
    });
  return watch;
};
