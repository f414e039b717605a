import type { NodeSpec } from '../config';
import type { HeartbeatObservation, Observed } from './observed';
import { readiness } from './readiness';
import type { Leader } from '../schemas';
import type { WatchdogState } from '../fleet/watchdog-state';
import { isPaused } from '../fleet/maintenance';

/** What `fleet failover` found before acting. */
export interface ManualFailoverInput {
  to: string;
  force: boolean;
  nodes: readonly NodeSpec[];
  leader: Observed<Leader>;
  heartbeats: ReadonlyMap<string, HeartbeatObservation>;
  watchdog: Observed<WatchdogState>;
  now: number;
  sampleMs: number;
  /** The heartbeat keep-alive in ms (`heartbeatKeepAliveSeconds`): how long a quiet node's heartbeat stays fresh. */
  keepAliveMs?: number;
  /**
   * Random characters that make the incident id unique: `now` may come from S3's Date header,
   * which has whole seconds, and two failovers in one second must not share an id.
   */
  nonce: string;
}

/** Go ahead (from whom, at which epoch), refuse, or reject the arguments. */
export type ManualFailoverPlan =
  | { kind: 'unknown-node'; message: string }
  | { kind: 'refuse'; message: string }
  | {
      kind: 'go';
      from: string;
      fromEpoch: number;
      to: string;
      /** `manual-<epoch>-<ms>-<nonce>`: the incident its events are filed under, unique per failover. */
      incidentId: string;
      /** The readiness objections `--ignore-readiness` overrode; empty when the target was ready. */
      overridden: string[];
    };

/**
 * The watchdog's own step in flight on the primary (a restart claimed or sent, a failover
 * claimed): a manual move now would race it and send the node's commands twice.
 */
const watchdogBusy = (watchdog: Observed<WatchdogState>, primary: string): string | null => {
  if (watchdog.state !== 'ok') return null;
  const incident = watchdog.value.nodes[primary]?.incident;
  if (incident === null || incident === undefined) return null;
  const { stage } = incident;
  if (stage.name === 'failing-over')
    return `the watchdog is failing ${primary} over to ${stage.failover.to} (incident ${incident.id})`;
  // A claim the pause holds unsent is not in flight: only one sent is.
  const held = stage.name === 'restart-claimed' && isPaused(watchdog.value.maintenance);
  if ((stage.name === 'restart-claimed' && !held) || stage.name === 'restart-sent')
    return (
      `the watchdog is ` +
      `restarting ${primary}'s ${incident.restart?.command === 'restartAgent' ? 'agent' : 'worker'} ` +
      `(incident ${incident.id})`
    );
  return null;
};

/**
 * Decides a manual failover: the target must be a configured node other than the primary, and
 * ready by the watchdog's rule, with no watchdog step in flight on the primary, unless forced. It moves the role from
 * the primary and epoch read
 * now, so a change in between makes the move fail instead of undoing someone else's.
 */
export const planManualFailover = (input: ManualFailoverInput): ManualFailoverPlan => {
  const { to, leader } = input;
  if (!input.nodes.some((n) => n.name === to)) {
    return {
      kind: 'unknown-node',
      message: `--to: ${to} is not a configured node (nodes: ${input.nodes.map((n) => n.name).join(', ') || 'none'})`,
    };
  }
  if (leader.state === 'missing')
    return {
      kind: 'refuse',
      message:
        'leader.json does not exist: there is no primary to take the role from (the first ready agent creates it)',
    };
  if (leader.state === 'corrupt')
    return { kind: 'refuse', message: `leader.json is corrupt (${leader.error}): repair it before moving the role` };
  const current = leader.value;
  if (current.primary === to)
    return { kind: 'refuse', message: `${to} is already the primary (epoch ${current.epoch})` };
  const ready = readiness(to, {
    nodes: input.nodes,
    leader: current,
    heartbeats: input.heartbeats,
    watchdog: input.watchdog,
    now: input.now,
    sampleMs: input.sampleMs,
    ...(input.keepAliveMs === undefined ? {} : { keepAliveMs: input.keepAliveMs }),
  });
  const busy = watchdogBusy(input.watchdog, current.primary);
  const objections = [...ready.reasons, ...(busy === null ? [] : [busy])];
  if (objections.length > 0 && !input.force)
    return {
      kind: 'refuse',
      message:
        `${ready.ready ? `${to} is ready, but` : `${to} is not ready:`} ${objections.join('; ')}. Use ` +
        `--ignore-readiness to go ahead anyway.`,
    };
  return {
    kind: 'go',
    from: current.primary,
    fromEpoch: current.epoch,
    to,
    incidentId: `manual-${current.epoch}-${input.now}-${input.nonce}`,
    overridden: objections,
  };
};

type Go = Extract<ManualFailoverPlan, { kind: 'go' }>;

/** What the readiness check found, as a move of the role (failover or switchover) shows it first. */
export const readinessStep = (
  plan: Pick<Go, 'to' | 'from' | 'fromEpoch' | 'overridden'>,
): { status: 'ok' | 'warn'; detail: string } =>
  plan.overridden.length > 0
    ? { status: 'warn', detail: `${plan.to} is not ready (${plan.overridden.join('; ')}): forced` }
    : { status: 'ok', detail: `${plan.to} is ready; ${plan.from} is primary of epoch ${plan.fromEpoch}` };

/** The `reason` written into leader.json (500 characters at most there). */
export const leaderReason = (plan: Go, reason: string): string =>
  `${plan.incidentId}: ${plan.from} → ${plan.to}: ${reason}` +
  (plan.overridden.length > 0 ? ' (--ignore-readiness)' : '');

/** The PROMOTED event's summary: what happened, the operator's reason, and what --ignore-readiness overrode. */
export const promotedSummary = (
  plan: Go,
  o: { reason: string; newEpoch: number; handover: Leader['handover']; outgoingStopped: boolean },
): string =>
  [
    `Manual failover: ${plan.to} is primary of epoch ${o.newEpoch} ` +
      `(${o.handover === 'immediate' ? 'starts at once' : 'starts once the old lease has lapsed'}).`,
    `Reason: ${o.reason}.`,
    o.outgoingStopped
      ? `${plan.from}: worker stopped before the handover.`
      : `${plan.from}: worker not confirmed stopped; it fences itself.`,
    plan.overridden.length > 0 ? `--ignore-readiness overrode: ${plan.overridden.join('; ')}.` : '',
  ]
    .filter((s) => s !== '')
    .join(' ');

type PlannedStep = 'stop-old-worker' | 'promote' | 'cooldown' | 'event' | 'start-worker' | 'origin-record';

/** What a failover of this plan would do, step by step: `fleet failover --dry-run` shows it and changes nothing. */
export const plannedSteps = (
  plan: Go,
  o: { commandWaitSeconds: number; cooldownSeconds: number; record: string | null },
): { step: PlannedStep; detail: string }[] => [
  { step: 'stop-old-worker', detail: `stop ${plan.from}'s worker, waiting up to ${o.commandWaitSeconds} s` },
  { step: 'promote', detail: `make ${plan.to} primary of epoch ${plan.fromEpoch + 1}, by CAS on ${plan.fromEpoch}` },
  {
    step: 'cooldown',
    detail:
      plan.overridden.length > 0
        ? `no cooldown (readiness ignored); close ${plan.from}'s open incident`
        : `start the watchdog's ${o.cooldownSeconds} s failover cooldown; close ${plan.from}'s open incident`,
  },
  { step: 'event', detail: `write and alert events/${plan.incidentId}/PROMOTED.json` },
  { step: 'start-worker', detail: `start ${plan.to}'s worker` },
  {
    step: 'origin-record',
    detail: o.record === null ? 'no Route 53 record configured' : `point ${o.record} at ${plan.to}`,
  },
];
