import type { NodeSpec } from '../config';
import { classify, type Confirmation, type Silence } from './liveness';
import { isLost } from './membership';
import { readyStandbys } from './readiness';
import { judgeRejoin } from './rejoin';
import { isStalled } from './stall';
import { advance, type FailoverPlan, type Incident, type Opening } from './incident';
import { next, replacedWorker } from './incident-pending';
import type { NodeWatch } from './watchdog-state';
import { move, open, timing, type LadderContext, type WatchdogAction, type WatchdogSettings } from './ladder-context';
import { claimRestart, progressRestart } from './restart';

export type { LadderContext, WatchdogAction, WatchdogSettings };
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
  if (incident === null) return watch;
  const pending = next(incident, timing(ctx), ctx.now);
  if (
    pending.kind !== 'carry-out-failover' ||
    ctx.now - pending.failover.claimedAt <= claimStaleMs(ctx.settings) ||
    ctx.paused === true
  )
    return watch;
  const renewed = advance(incident, { kind: 'CLAIM_RENEWED', at: ctx.now });
  if (renewed === null || renewed === 'closed' || renewed.stage.name !== 'failing-over') return watch;
  ctx.actions.push({ kind: 'failover', node: spec.name, incidentId: incident.id, step: renewed.stage.failover });
  return { ...watch, incident: renewed };
};

/**
 * Claims the failover of the primary to the best ready standby, within the cooldown; with no
 * ready standby it alerts once and tries again on the next run.
 */
/** The restart this run sends: one claimed and not held back by a pause (a held claim changed nothing on the node). */
const sendsClaim = (ctx: LadderContext, incident: Incident): boolean =>
  incident.stage.name === 'restart-claimed' && ctx.paused !== true;

const tryFailover = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const { leader } = ctx;
  const { incident } = watch;
  if (leader === null || leader.primary !== spec.name || incident === null) return watch;
  const pending = next(incident, timing(ctx), ctx.now);
  if (pending.kind !== 'choose-standby') return watch;
  const cooling =
    ctx.lastFailoverAt !== null && ctx.now - ctx.lastFailoverAt < ctx.settings.failoverCooldownSeconds * 1000;
  const sampleMs = ctx.settings.sampleIntervalSeconds * 1000;
  const input = {
    nodes: ctx.settings.nodes,
    watches: ctx.watches,
    heartbeats: ctx.heartbeats,
    leader,
    now: ctx.now,
    sampleMs,
  };
  const target =
    cooling || ctx.paused === true
      ? undefined
      : readyStandbys({ ...input, lostMs: ctx.lostMs, unready: ctx.unready ?? new Set() })[0];
  if (target === undefined) {
    if (pending.noStandbyAlerted) return watch;
    return move(
      ctx,
      spec,
      watch,
      { kind: 'NO_STANDBY' },
      ctx.paused === true
        ? `${spec.name}: failover held back, the fleet is paused (fleet resume).`
        : cooling
          ? `${spec.name}: failover held back, the last one was within the cooldown.`
          : `${spec.name}: no standby is ready to take over.`,
    );
  }
  const failover: FailoverPlan = {
    to: target.name,
    fromEpoch: leader.epoch,
    claimedAt: ctx.now,
    outgoingStopped: ctx.confirmations.get(spec.name)?.instance === 'stopped',
    stopOutgoing: incident.kind === 'stall',
  };
  const claimed = move(
    ctx,
    spec,
    watch,
    { kind: 'FAILOVER_STARTED', failover },
    `${spec.name}: failing over to ${target.name}.`,
    { newPrimary: target.name },
  );
  // Only a failover the machine took is carried out.
  if (claimed.incident?.stage.name === 'failing-over')
    ctx.actions.push({ kind: 'failover', node: spec.name, incidentId: incident.id, step: failover });
  return claimed;
};

/** What AWS says of a silent node, for its alert. */
const evidence = (c: Confirmation | undefined): string =>
  `Lightsail: ${c?.instance ?? 'not asked'}, SSM: ${c?.ssm ?? 'not asked'}`;

/**
 * A stale lease. Confirmed dead by Lightsail or SSM: fail over at once. Unconfirmed (a VM that
 * crashed a minute ago still reads running): alert, and let a standby's takeover decide.
 */
const judgePrimarySilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, silence: Silence): NodeWatch => {
  const conf = ctx.confirmations.get(spec.name);
  const dead = `${spec.name}: the primary's node is gone (no heartbeat; ${evidence(conf)}).`;
  if (watch.incident?.kind !== 'dead') {
    if (silence === 'silent')
      return open(
        ctx,
        spec,
        watch,
        'dead',
        { kind: 'NODE_SILENT' },
        `${spec.name}: the primary is silent (${evidence(conf)}); ` +
          'nothing confirms yet that it is gone, its lease decides.',
      );
    return tryFailover(ctx, spec, open(ctx, spec, watch, 'dead', { kind: 'NODE_DEAD' }, dead));
  }
  if (silence === 'silent') return watch;
  return tryFailover(ctx, spec, move(ctx, spec, watch, { kind: 'NODE_DEAD' }, dead));
};

/**
 * Silence of a standby: the fleet lost its redundancy. Unless AWS says the machine is gone, its
 * agent is restarted once through SSM: a dead agent comes back; for a crashed node the command
 * waits undelivered and is cancelled when the watchdog gives up on it.
 */
const judgeStandbySilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, silence: Silence): NodeWatch => {
  if (watch.incident?.kind === 'standby') return progressRestart(ctx, spec, watch);
  const gone = silence === 'dead' ? 'its node is gone' : 'it is silent';
  const then = silence === 'dead' ? '' : ' Restarting its agent.';
  const summary =
    `${spec.name}: the standby is lost: ${gone} (no ` +
    `heartbeat; ${evidence(ctx.confirmations.get(spec.name))}).${then}`;
  return claimRestart(
    ctx,
    spec,
    open(ctx, spec, watch, 'standby', { kind: 'REDUNDANCY_LOST', at: ctx.now, restart: silence !== 'dead' }, summary),
  );
};

/** Closes the node's open incident without an event: its reason is gone. */
const supersede = (watch: NodeWatch): NodeWatch =>
  watch.incident !== null && advance(watch.incident, { kind: 'SUPERSEDED' }) === 'closed'
    ? { ...watch, incident: null }
    : watch;

/** Silence of a node, or null when it is heard from: the primary by its lease, the others by membership. */
const judgeSilence = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch, isPrimary: boolean): NodeWatch | null => {
  const gone = isPrimary ? ctx.leaseStale : isLost(watch, ctx.now, ctx.lostMs);
  if (!gone) return null;
  const silence = classify(ctx.confirmations.get(spec.name));
  return isPrimary ? judgePrimarySilence(ctx, spec, watch, silence) : judgeStandbySilence(ctx, spec, watch, silence);
};

/**
 * A standby took over this node's expired lease: that is the verdict, alerted with what AWS says
 * of the node. The role has moved, so the incident closes at once; traffic follows the lease, and
 * membership judges the node from now on. One already alerted as a silent primary is not again.
 */
const judgeTakeover = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const alerted = watch.incident?.kind === 'dead';
  const closed = supersede(watch);
  if (alerted) return closed;
  const conf = ctx.confirmations.get(spec.name);
  const silence = classify(conf);
  const to = ctx.leader?.primary ?? 'a standby';
  const summary = `${spec.name}: its lease expired and ${to} took it over (${evidence(conf)}).`;
  const opened = open(ctx, spec, closed, 'dead', { kind: silence === 'dead' ? 'NODE_DEAD' : 'NODE_SILENT' }, summary);
  return supersede(opened);
};

/** The stall ladder of the primary: restart, recover or escalate, then fail over. */
const judgeStall = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  const { counter } = watch;
  const { stallSamples, recoverySamples } = ctx.settings;
  if (watch.incident === null) {
    if (!isStalled(counter, stallSamples)) return watch;
    const why =
      counter.lastFault === 'no-worker'
        ? 'no worker process is alive'
        : 'the backlog is not shrinking and no task progressed';
    const worker = counter.last?.worker ?? undefined;
    const stalled: Opening = { kind: 'STALLED', at: ctx.now, ...(worker === undefined ? {} : { worker }) };
    return claimRestart(
      ctx,
      spec,
      open(
        ctx,
        spec,
        watch,
        'stall',
        stalled,
        `${spec.name} stalled: ${counter.failing} consecutive failing samples (${why}).`,
      ),
    );
  }
  const current = progressRestart(ctx, spec, watch);
  // A restart claimed this very run has not reset the samples yet: they cannot speak for it.
  // Nor can the stalled worker's own: it may finish a stage while the restart drains it.
  const incident = current.incident;
  const replaced = incident === null ? null : replacedWorker(incident);
  const byReplaced = replaced !== null && counter.last?.worker === replaced;
  if (counter.healthy >= recoverySamples && !(incident !== null && sendsClaim(ctx, incident)) && !byReplaced) {
    return move(
      ctx,
      spec,
      current,
      { kind: 'RECOVERED' },
      `${spec.name} is healthy again: ${counter.healthy} healthy samples.`,
    );
  }
  const still = isStalled(counter, stallSamples)
    ? move(
        ctx,
        spec,
        current,
        { kind: 'STILL_STALLED' },
        `${spec.name} is still stalled a full window after its restart.`,
      )
    : current;
  return tryFailover(ctx, spec, still);
};

/** One node's judgement this round: which step of its incident's machine is due. */
export const judgeNode = (ctx: LadderContext, spec: NodeSpec, watch: NodeWatch): NodeWatch => {
  if (watch.incident?.stage.name === 'failing-over') return resumeFailover(ctx, spec, watch);
  const isPrimary = ctx.leader?.primary === spec.name;
  // Out of rotation: nothing to heal or alert; from its uncordoning it is judged by its samples then.
  if (!isPrimary && ctx.cordoned?.has(spec.name) === true) return supersede(watch);
  let current = ctx.takenOverFrom === spec.name ? judgeTakeover(ctx, spec, watch) : watch;
  // A node that lost the role has nothing left to heal as a primary, one that took it nothing
  // to rejoin, and a silent one is a lost standby: such an incident is superseded.
  const kind = current.incident?.kind;
  const over = isPrimary ? kind === 'rejoin' : kind === 'stall' || kind === 'dead';
  if (over || (kind === 'rejoin' && isLost(current, ctx.now, ctx.lostMs))) current = supersede(current);
  const silent = judgeSilence(ctx, spec, current, isPrimary);
  if (silent !== null) return silent;
  const incident = current.incident;
  if (incident !== null && (incident.kind === 'standby' || incident.kind === 'dead')) {
    // A restart in flight reports its outcome before the incident closes: the node may well be
    // heard from before its command's result is read (an agent restart takes seconds).
    if (sendsClaim(ctx, incident) || incident.stage.name === 'restart-sent') return progressRestart(ctx, spec, current);
    return move(ctx, spec, current, { kind: 'RECOVERED' }, `${spec.name} is heard from again.`);
  }
  return isPrimary ? judgeStall(ctx, spec, current) : judgeRejoin(ctx, spec, current);
};
