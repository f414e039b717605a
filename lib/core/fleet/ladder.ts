import type { Config, NodeSpec } from '../config';
import type { EventKind, FleetEvent } from '../events';
import { classifySilence, isSilent, readyStandbys, type Confirmation } from './liveness';
import type { Heartbeat, Leader } from '../schemas';
import { isStalled, type StallCounter } from './stall';
import { makeEvent } from './watchdog-events';
import type { FailoverStep, Incident, NodeWatch } from './watchdog-state';

/** What the handler must carry out after the new state was stored by CAS. */
export type WatchdogAction =
  | { kind: 'publish'; event: FleetEvent }
  | { kind: 'command'; node: string; instanceId: string; incidentId: string; command: 'restartWorker' | 'restartAgent' }
  | { kind: 'verify'; node: string; instanceId: string; incidentId: string; commandId: string; deadline: number }
  | { kind: 'failover'; node: string; incidentId: string; step: FailoverStep }
  /** Point the origin record at the primary `leader.json` names (traffic follows the lease). */
  | { kind: 'route'; primary: string; epoch: number };

export type WatchdogSettings = Pick<
  Config,
  'nodes' | 'stallSamples' | 'recoverySamples' | 'restartBudgetPerHour' | 'restartVerifySeconds' | 'sampleIntervalSeconds' | 'failoverCooldownSeconds' | 'commandWaitSeconds'
> & {
  /** An origin record is configured: the watchdog keeps it on the primary. */
  routed?: boolean;
};

/** Everything one judgement reads, and where it puts its actions. */
export interface LadderContext {
  now: number;
  settings: WatchdogSettings;
  leader: Leader | null;
  heartbeats: ReadonlyMap<string, Heartbeat>;
  confirmations: ReadonlyMap<string, Confirmation>;
  /** Every node's record as judged so far this round (for choosing a standby). */
  watches: Readonly<Record<string, NodeWatch>>;
  lastFailoverAt: number | null;
  actions: WatchdogAction[];
}

const HOUR_MS = 3_600_000;

const publish = (ctx: LadderContext, spec: NodeSpec, kind: EventKind, incident: Incident, counter: StallCounter, summary: string, extra: Pick<FleetEvent, 'newPrimary' | 'newEpoch'> = {}): void => {
  ctx.actions.push({ kind: 'publish', event: makeEvent(kind, spec.name, incident, counter, ctx.now, summary, extra) });
};

const openIncident = (spec: NodeSpec, watch: NodeWatch, kind: Incident['kind'], epoch: number, now: number): Incident => ({
  id: `${spec.name}-e${epoch}-i${watch.incidents + 1}`,
  kind,
  openedAt: now,
  epoch,
  restart: null,
  escalated: false,
  failover: null,
  noStandbyAlerted: false,
});

/** Claims a restart (worker or agent) within the hourly budget. */
const claimCommand = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, incident: Incident, command: 'restartWorker' | 'restartAgent'): NodeWatch => {
  const recent = watch.restartTimes.filter((t) => ctx.now - t < HOUR_MS);
  if (recent.length >= ctx.settings.restartBudgetPerHour) {
    publish(ctx, spec, 'RESTART_BUDGET_EXHAUSTED', incident, watch.counter, `${spec.name}: ${recent.length} restarts in the last hour, budget ${ctx.settings.restartBudgetPerHour}.`);
    return { ...watch, incident: { ...incident, restart: { command, status: 'failed', claimedAt: ctx.now, detail: 'restart budget exhausted' } }, restartTimes: recent };
  }
  ctx.actions.push({ kind: 'command', node: spec.name, instanceId: spec.instanceId, incidentId: incident.id, command });
  return {
    ...watch,
    counter: { ...watch.counter, failing: 0, healthy: 0 },
    incident: { ...incident, restart: { command, status: 'claimed', claimedAt: ctx.now } },
    restartTimes: [...recent, ctx.now],
  };
};

/** Moves a claimed or sent restart along: a claim nobody sent fails, a sent one is verified. */
const progressCommand = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const incident = watch.incident;
  const restart = incident?.restart;
  if (incident === null || restart === undefined || restart === null) return watch;
  const verifyMs = ctx.settings.restartVerifySeconds * 1000;
  if (restart.status === 'claimed' && ctx.now - restart.claimedAt > verifyMs) {
    const failed: Incident = { ...incident, restart: { ...restart, status: 'failed', finishedAt: ctx.now, detail: 'restart claimed but never sent' } };
    publish(ctx, spec, 'RESTART_FAILED', failed, watch.counter, `${spec.name}: the restart could not be delivered.`);
    return { ...watch, incident: failed };
  }
  if (restart.status === 'sent' && restart.commandId !== undefined) {
    ctx.actions.push({ kind: 'verify', node: spec.name, instanceId: spec.instanceId, incidentId: incident.id, commandId: restart.commandId, deadline: (restart.sentAt ?? restart.claimedAt) + verifyMs });
  }
  return watch;
};

/**
 * How long a claimed failover belongs to the invocation that claimed it: its stop wait plus a
 * restart's verification, longer than one watchdog invocation can run. Older claims were left
 * by an invocation that died; the watchdog (and a replay) may take them over.
 */
export const claimStaleMs = (settings: Pick<WatchdogSettings, 'commandWaitSeconds' | 'restartVerifySeconds'>): number =>
  (settings.commandWaitSeconds + settings.restartVerifySeconds) * 1000;

/** Re-issues a failover whose claimer went quiet; every step of it is idempotent. */
const resumeFailover = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const incident = watch.incident;
  const step = incident?.failover;
  if (incident === null || step === null || step === undefined || step.status !== 'claimed') return watch;
  if (ctx.now - step.claimedAt <= claimStaleMs(ctx.settings)) return watch;
  const renewed: FailoverStep = { ...step, claimedAt: ctx.now };
  ctx.actions.push({ kind: 'failover', node: spec.name, incidentId: incident.id, step: renewed });
  return { ...watch, incident: { ...incident, failover: renewed } };
};

/**
 * Claims the failover of the primary to the best ready standby, within the cooldown; with no
 * ready standby it alerts once and tries again on the next run.
 */
const tryFailover = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, incident: Incident): NodeWatch => {
  const leader = ctx.leader;
  if (leader === null || leader.primary !== spec.name || incident.failover !== null) return { ...watch, incident };
  const cooling = ctx.lastFailoverAt !== null && ctx.now - ctx.lastFailoverAt < ctx.settings.failoverCooldownSeconds * 1000;
  const target = cooling ? undefined : readyStandbys(ctx.settings.nodes, ctx.watches, ctx.heartbeats, leader, ctx.now, ctx.settings.sampleIntervalSeconds * 1000)[0];
  if (target === undefined) {
    if (incident.noStandbyAlerted) return { ...watch, incident };
    publish(ctx, spec, 'NO_STANDBY', incident, watch.counter, cooling ? `${spec.name}: failover held back, the last one was within the cooldown.` : `${spec.name}: no standby is ready to take over.`);
    return { ...watch, incident: { ...incident, noStandbyAlerted: true } };
  }
  const step: FailoverStep = {
    status: 'claimed',
    to: target.name,
    fromEpoch: leader.epoch,
    claimedAt: ctx.now,
    outgoingStopped: ctx.confirmations.get(spec.name)?.instance === 'stopped',
    stopOutgoing: incident.kind === 'stall',
  };
  publish(ctx, spec, 'FAILOVER_STARTED', incident, watch.counter, `${spec.name}: failing over to ${target.name}.`, { newPrimary: target.name });
  ctx.actions.push({ kind: 'failover', node: spec.name, incidentId: incident.id, step });
  return { ...watch, incident: { ...incident, failover: step } };
};

/** What AWS says of a silent node, for its alert. */
const evidence = (c: Confirmation | undefined): string => `Lightsail: ${c?.instance ?? 'not asked'}, SSM: ${c?.ssm ?? 'not asked'}`;

/**
 * Silence of the primary. Confirmed dead (Lightsail stopped, or SSM lost its agent): fail over
 * at once. Not confirmed, as for a VM that crashed a minute ago (Lightsail still reads running,
 * SSM notices only after minutes): alert, and let the lease decide. A standby takes over only
 * once the primary has not renewed for a full expiry by the standby's own clock, so a primary
 * that only lost its heartbeats keeps the role; traffic then follows the lease.
 */
const judgePrimarySilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, silence: 'silent' | 'dead'): NodeWatch => {
  const conf = ctx.confirmations.get(spec.name);
  let next = watch;
  let incident = watch.incident?.kind === 'dead' ? watch.incident : null;
  if (incident === null) {
    incident = openIncident(spec, watch, 'dead', ctx.leader?.epoch ?? 0, ctx.now);
    next = { ...watch, incident, incidents: watch.incidents + 1 };
    if (silence === 'silent') {
      publish(ctx, spec, 'NODE_SILENT', incident, watch.counter, `${spec.name}: the primary is silent (${evidence(conf)}); nothing confirms yet that it is gone, its lease decides.`);
      return next;
    }
  }
  if (silence === 'silent' || incident.confirmed === true) return silence === 'dead' ? tryFailover(ctx, spec, next, incident) : next;
  const confirmed: Incident = { ...incident, confirmed: true };
  publish(ctx, spec, 'NODE_DEAD', confirmed, watch.counter, `${spec.name}: the primary's node is gone (no heartbeat; ${evidence(conf)}).`);
  return tryFailover(ctx, spec, { ...next, incident: confirmed }, confirmed);
};

/**
 * Silence of a standby: the fleet lost its redundancy. Unless AWS says the machine is gone, its
 * agent is restarted once through SSM: a dead agent comes back; for a crashed node the command
 * waits undelivered and is cancelled when the watchdog gives up on it.
 */
const judgeStandbySilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, silence: 'silent' | 'dead'): NodeWatch => {
  if (watch.incident?.kind === 'standby' || watch.incident?.kind === 'agent') return progressCommand(ctx, spec, watch);
  const conf = ctx.confirmations.get(spec.name);
  const opened = openIncident(spec, watch, 'standby', ctx.leader?.epoch ?? 0, ctx.now);
  const next = { ...watch, incident: opened, incidents: watch.incidents + 1 };
  const gone = silence === 'dead' ? 'its node is gone' : 'it is silent';
  publish(ctx, spec, 'REDUNDANCY_LOST', opened, watch.counter, `${spec.name}: the standby is lost: ${gone} (no heartbeat; ${evidence(conf)}).${silence === 'dead' ? '' : ' Restarting its agent.'}`);
  return silence === 'dead' ? next : claimCommand(ctx, spec, next, opened, 'restartAgent');
};

/** Silence of a node, or null when it is heard from. */
const judgeSilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, isPrimary: boolean): NodeWatch | null => {
  const silent = isSilent(watch, ctx.now, ctx.settings.sampleIntervalSeconds * 1000);
  const silence = classifySilence(silent, ctx.confirmations.get(spec.name));
  if (silence === 'none') return null;
  return isPrimary ? judgePrimarySilence(ctx, spec, watch, silence) : judgeStandbySilence(ctx, spec, watch, silence);
};

/** The stall ladder of the primary: restart, recover or escalate, then fail over. */
const judgeStall = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const { counter } = watch;
  const incident = watch.incident;
  const { stallSamples, recoverySamples } = ctx.settings;
  if (incident === null) {
    if (!isStalled(counter, stallSamples)) return watch;
    const opened = openIncident(spec, watch, 'stall', ctx.leader?.epoch ?? 0, ctx.now);
    const why = counter.lastFault === 'no-worker' ? 'no worker process is alive' : 'the backlog is not shrinking and no task progressed';
    publish(ctx, spec, 'STALLED', opened, counter, `${spec.name} stalled: ${counter.failing} consecutive failing samples (${why}).`);
    return claimCommand(ctx, spec, { ...watch, incidents: watch.incidents + 1 }, opened, 'restartWorker');
  }
  const next = progressCommand(ctx, spec, watch);
  const current = next.incident ?? incident;
  if (counter.healthy >= recoverySamples && current.restart?.status !== 'claimed') {
    publish(ctx, spec, 'RECOVERED', current, counter, `${spec.name} is healthy again: ${counter.healthy} healthy samples.`);
    return { ...next, incident: null };
  }
  if (isStalled(counter, stallSamples) && current.restart !== null && !current.escalated) {
    const escalated: Incident = { ...current, escalated: true };
    publish(ctx, spec, 'STILL_STALLED', escalated, counter, `${spec.name} is still stalled a full window after its restart.`);
    return tryFailover(ctx, spec, next, escalated);
  }
  if (current.escalated || current.restart?.status === 'failed') return tryFailover(ctx, spec, next, current);
  return next;
};

/** One node's judgement this round. */
export const judgeNode = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  if (watch.incident?.failover?.status === 'claimed') return resumeFailover(ctx, spec, watch);
  const isPrimary = ctx.leader?.primary === spec.name;
  let current = watch;
  // A node that lost the role has nothing left to heal as a primary.
  if (!isPrimary && (current.incident?.kind === 'stall' || current.incident?.kind === 'dead')) current = { ...current, incident: null };
  const silent = judgeSilence(ctx, spec, current, isPrimary);
  if (silent !== null) return silent;
  const incident = current.incident;
  if (incident !== null && (incident.kind === 'agent' || incident.kind === 'standby' || incident.kind === 'dead')) {
    // A restart in flight reports its outcome before the incident closes: the node may well be
    // heard from before its command's result is read (an agent restart takes seconds).
    if (incident.restart?.status === 'claimed' || incident.restart?.status === 'sent') return progressCommand(ctx, spec, current);
    publish(ctx, spec, 'RECOVERED', incident, current.counter, `${spec.name} is heard from again.`);
    return { ...current, incident: null };
  }
  return isPrimary ? judgeStall(ctx, spec, current) : current;
};
