import type { NodeSpec } from '../config';
import { PROOF_INTERVALS, UNREADY_SAMPLES, unreadyWorker, workerFault } from './readiness';
import type { NodeWatch } from './watchdog-state';
import { move, open, type LadderContext } from './ladder-context';
import { claimRestart, progressRestart, recentRestarts } from './restart';

const UNREADY_WHY = {
  'no-worker': 'no worker process runs',
  unproven: 'its worker has not passed its self-test',
} as const;

/**
 * A standby counts for redundancy only with a worker that proves it works. One unready for
 * UNREADY_SAMPLES samples is restarted in standby mode within its own hourly budget, and rejoins
 * once its self-test passes; still failing PROOF_INTERVALS intervals later, it stays out.
 */
export const judgeRejoin = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const hb = ctx.heartbeats.get(spec.name);
  const last = hb?.samples.at(-1);
  if (ctx.leader === null || hb === undefined || last === undefined) return watch;
  const sampleMs = ctx.settings.sampleIntervalSeconds * 1000;
  if (watch.incident === null) {
    // Only once its agent says it no longer holds a lease: a worker started under a lease its
    // agent has not yet found lost could consume beside the new primary.
    const fault = hb.role === 'primary' || last.mayConsume === true ? null : unreadyWorker(hb, sampleMs);
    // Once the budget is spent the node stays out quietly (its REJOIN_FAILED said so) until the
    // hour has room.
    if (fault === null || recentRestarts(ctx, watch, 'rejoinTimes').length >= ctx.settings.restartBudgetPerHour)
      return watch;
    const summary =
      `${spec.name} is not a ready standby: ${UNREADY_WHY[fault]} (${UNREADY_SAMPLES} samples in a row). ` +
      'Restarting its worker in standby mode.';
    return claimRestart(ctx, spec, open(ctx, spec, watch, 'rejoin', { kind: 'STANDBY_UNREADY', at: ctx.now }, summary));
  }
  const current = progressRestart(ctx, spec, watch);
  const incident = current.incident;
  if (incident === null || incident.stage.name === 'restart-claimed') return current;
  if (workerFault(last, sampleMs) === null)
    return move(
      ctx,
      spec,
      current,
      { kind: 'RECOVERED' },
      `${spec.name} rejoined: its worker passed its self-test, a ready standby again.`,
    );
  const finishedAt = incident.restart?.finishedAt;
  if (
    incident.stage.name !== 'watching' ||
    finishedAt === undefined ||
    ctx.now - finishedAt < PROOF_INTERVALS * sampleMs
  )
    return current;
  const fault = workerFault(last, sampleMs) ?? 'unproven';
  const spent = recentRestarts(ctx, current, 'rejoinTimes').length >= ctx.settings.restartBudgetPerHour;
  const then = spent
    ? ' Its rejoin budget is spent: it stays out of the standby pool until the hour has room.'
    : ' The watchdog tries again.';
  return move(
    ctx,
    spec,
    current,
    { kind: 'REJOIN_FAILED' },
    `${spec.name} did not rejoin: ${UNREADY_WHY[fault]} ` +
      `${Math.round((ctx.now - finishedAt) / sampleMs)} sample intervals after its restart.${then}`,
  );
};
