import type { Config, NodeSpec } from '../config';
import type { EventKind, FleetEvent } from '../events';
import type { Confirmation } from './liveness';
import type { Heartbeat, Leader } from '../schemas';
import type { StallCounter } from './stall';
import {
  advance,
  openIncident,
  type FailoverPlan,
  type Incident,
  type IncidentKind,
  type Opening,
  type Step,
} from './incident';
import type { Timing } from './incident-pending';
import { makeEvent } from './watchdog-events';
import type { NodeWatch } from './watchdog-state';

/** What the handler must carry out after the new state was stored by CAS. */
export type WatchdogAction =
  | { kind: 'publish'; event: FleetEvent }
  /** `instanceId` is the configured one; unset, Run Command finds the node's instance by its role. */
  | {
      kind: 'command';
      node: string;
      instanceId: string | undefined;
      incidentId: string;
      command: 'restartWorker' | 'restartAgent';
    }
  | {
      kind: 'verify';
      node: string;
      instanceId: string | undefined;
      incidentId: string;
      commandId: string;
      deadline: number;
    }
  /** A restart claimed long ago, never recorded as sent: ask SSM whether it went out, or send it now. */
  | {
      kind: 'find-restart';
      node: string;
      instanceId: string | undefined;
      incidentId: string;
      command: 'restartWorker' | 'restartAgent';
    }
  | { kind: 'failover'; node: string; incidentId: string; step: FailoverPlan }
  /** Point the origin record at the primary `leader.json` names (traffic follows the lease). */
  | { kind: 'route'; primary: string; epoch: number }
  /** Move this many messages from the intake queue to the task queue (backpressure: lib/core/fleet/admission.ts). */
  | { kind: 'admit'; count: number }
  /**
   * Copy the damaged leader record aside and replace exactly that version (`etag`) with `leader`, when one can be named
   * (lib/core/fleet/repair.ts).
   */
  | { kind: 'repair-leader'; etag: string; leader: Leader | null };

export type WatchdogSettings = Pick<
  Config,
  | 'nodes'
  | 'stallSamples'
  | 'recoverySamples'
  | 'restartBudgetPerHour'
  | 'restartVerifySeconds'
  | 'sampleIntervalSeconds'
  | 'failoverCooldownSeconds'
  | 'commandWaitSeconds'
  | 'leaseExpirySeconds'
> & {
  /** An origin record is configured: the watchdog keeps it on the primary. */
  routed?: boolean;
  /** The schedule's period (`watchdogScheduleSeconds`, its default of 60 when absent): how far apart runs may be. */
  watchdogScheduleSeconds?: number;
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
  /** Nodes that may not take the role: their beat says they cannot reach their stores, or they are cordoned. */
  unready?: ReadonlySet<string>;
  /** Cordoned standbys: out of rotation, their silence and restarts no incident (maintenance.ts). */
  cordoned?: ReadonlySet<string>;
  /** The automation is paused: steps are judged and alerted, and no restart or failover is carried out. */
  paused?: boolean;
  lastFailoverAt: number | null;
  /** How long a node's newest sample may stay unchanged (membership.ts). */
  lostMs: number;
  /** Nobody renewed or took over the lease for its expiry and a schedule period. */
  leaseStale: boolean;
  /** The node whose expired lease a standby took over since the last run, if any. */
  takenOverFrom: string | null;
  actions: WatchdogAction[];
}

export const timing = (ctx: LadderContext): Timing => ({ restartVerifyMs: ctx.settings.restartVerifySeconds * 1000 });

export const publish = (
  ctx: LadderContext,
  spec: NodeSpec,
  kind: EventKind,
  incident: Incident,
  counter: StallCounter,
  summary: string,
  extra: Pick<FleetEvent, 'newPrimary' | 'newEpoch'> = {},
): void => {
  const event = makeEvent(kind, spec.name, incident, counter, ctx.now, summary, extra);
  ctx.actions.push({ kind: 'publish', event: ctx.paused === true ? { ...event, paused: true } : event });
};

/**
 * Moves the node's open incident one step through the machine (lib/core/fleet/incident.ts) and
 * publishes the step's event; a step its stage does not accept changes nothing and says nothing.
 */
export const move = (
  ctx: LadderContext,
  spec: NodeSpec,
  watch: NodeWatch,
  step: Step & { kind: EventKind },
  summary: string,
  extra: Pick<FleetEvent, 'newPrimary' | 'newEpoch'> = {},
): NodeWatch => {
  const incident = watch.incident;
  if (incident === null) return watch;
  const moved = advance(incident, step);
  if (moved === null) return watch;
  publish(ctx, spec, step.kind, incident, watch.counter, summary, extra);
  return { ...watch, incident: moved === 'closed' ? null : moved };
};

/** Opens the node's next incident with the step that detected it, and publishes that step. */
export const open = (
  ctx: LadderContext,
  spec: NodeSpec,
  watch: NodeWatch,
  kind: IncidentKind,
  step: Opening,
  summary: string,
): NodeWatch => {
  const epoch = ctx.leader?.epoch ?? 0;
  const incident = openIncident(
    { id: `${spec.name}-e${epoch}-i${watch.incidents + 1}`, kind, epoch, at: ctx.now },
    step,
  );
  publish(ctx, spec, step.kind, incident, watch.counter, summary);
  return { ...watch, incident, incidents: watch.incidents + 1 };
};
