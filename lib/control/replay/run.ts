import { NotFoundError } from '../../core/errors';
import { eventKeyParts } from '../../core/views/event-query';
import { eventKey, fleetEventSchema, type FleetEvent } from '../../core/events';
import { KEYS, PREFIXES } from '../../core/keys';
import { claimStaleMs } from '../../core/fleet/ladder';
import { lostAfterMs, newestSample, observe } from '../../core/fleet/membership';
import { readyStandbys } from '../../core/fleet/readiness';
import { cordonedNodes } from '../../core/fleet/maintenance';
import { planReplay, type ReplayAction, type ReplayPlan } from '../../core/views/replay';
import type { ReplayRef, ReplayRequest } from '../../core/views/replay-input';
import { advance } from '../../core/fleet/incident';
import { next } from '../../core/fleet/incident-pending';
import { withIncident } from '../../core/fleet/outcomes';
import {
  emptyWatchdogState,
  watchdogStateSchema,
  type Incident,
  type NodeWatch,
} from '../../core/fleet/watchdog-state';
import { sendCommand, verify } from '../watchdog/actions';
import { withLogFields } from '../../log';
import type { WatchdogDeps } from '../watchdog/deps';
import { failover } from '../watchdog/failover';
import { readBeats, readHeartbeats, readLeader } from '../watchdog/run';

export interface ReplayResult {
  mode: 'dry-run' | 'execute';
  plan: ReplayPlan;
  /** What the execute carried out, or why it did not; empty for a dry run or nothing to do. */
  executed: string[];
  /** True when the execute carried out the plan's action (not when someone else took it up first). */
  acted: boolean;
  /** The plan after the execute, from freshly read state. */
  after?: ReplayPlan;
}

/** The event a request names, read from `events/` when only its id is given. */
const resolveEvent = async (deps: WatchdogDeps, ref: ReplayRef): Promise<FleetEvent> => {
  if ('event' in ref) return ref.event;
  const found = await deps.store.read(eventKey(ref), fleetEventSchema);
  if (found === null)
    throw new NotFoundError(`event ${ref.eventId} not found under ${deps.config.prefix}${eventKey(ref)}`);
  return found.value;
};

/** Reads everything the plan needs; only reads. */
const gather = async (deps: WatchdogDeps, event: FleetEvent): Promise<ReplayPlan> => {
  const [leader, heartbeats, beats, state, keys] = await Promise.all([
    readLeader(deps),
    readHeartbeats(deps, []),
    readBeats(deps),
    deps.store.read(KEYS.watchdogState, watchdogStateSchema).then((s) => s?.value ?? emptyWatchdogState()),
    deps.store.list(PREFIXES.incidentEvents(event.incidentId)),
  ]);
  const now = deps.now();
  const watches: Record<string, NodeWatch> = {};
  for (const [name, watch] of Object.entries(state.nodes))
    watches[name] = observe(watch, newestSample(heartbeats.get(name), beats.get(name)), now);
  const written = new Set(keys.flatMap((k) => eventKeyParts(k)?.kind ?? []));
  const standbys = {
    nodes: deps.config.nodes,
    watches,
    heartbeats,
    now,
    sampleMs: deps.config.sampleIntervalSeconds * 1000,
  };
  const ready =
    leader === null
      ? []
      : readyStandbys({
          ...standbys,
          leader,
          lostMs: lostAfterMs(deps.config),
          unready: cordonedNodes(state.maintenance),
        }).map((n) => n.name);
  return planReplay({
    event,
    leader,
    watch: state.nodes[event.node] ?? null,
    written,
    ready,
    dns: deps.dns !== null,
    restartVerifyMs: deps.config.restartVerifySeconds * 1000,
    claimStaleMs: claimStaleMs(deps.config),
    now,
  });
};

/**
 * Claims the step by CAS on the watchdog state: only if the incident is still open and the
 * step is as the plan saw it. Two concurrent replays (or a replay and the watchdog) cannot
 * both win, so the step is carried out once.
 */
const claim = async (
  deps: WatchdogDeps,
  event: FleetEvent,
  accept: (incident: Incident) => Incident | null,
): Promise<Incident | null> => {
  const { result } = await deps.store.update(KEYS.watchdogState, watchdogStateSchema, (current) => {
    const out = withIncident(current ?? emptyWatchdogState(), event.node, event.incidentId, (watch, incident) => {
      const next = accept(incident);
      return next === null ? null : { watch: { ...watch, incident: next }, event: null };
    });
    return { value: out?.state ?? null, result: out?.state.nodes[event.node]?.incident ?? null };
  });
  return result;
};

/** What an execute carried out, in words. */
type Carried = { acted: boolean; note: string };

/** The incident's pending action by the machine's rule. */
const pendingOf = (deps: WatchdogDeps, incident: Incident, now: number) =>
  next(incident, { restartVerifyMs: deps.config.restartVerifySeconds * 1000 }, now);

/** The claim taken over by this replay: the same stage, claimed anew. */
const renew = (incident: Incident, now: number): Incident | null => {
  const moved = advance(incident, { kind: 'CLAIM_RENEWED', at: now });
  return moved === 'closed' ? null : moved;
};

const carryOutReplay = async (deps: WatchdogDeps, event: FleetEvent, action: ReplayAction): Promise<Carried> => {
  const spec = deps.config.nodes.find((n) => n.name === event.node);
  if (spec === undefined) return { acted: false, note: `${event.node} is not a configured node: nothing done` };
  const base = { node: spec.name, instanceId: spec.instanceId, incidentId: event.incidentId };
  const now = deps.now();
  switch (action.kind) {
    case 'verify-restart':
      await verify(deps, { kind: 'verify', ...base, commandId: action.commandId, deadline: action.deadline });
      return { acted: true, note: `read the result of command ${action.commandId}` };
    case 'send-restart': {
      const won = await claim(deps, event, (i) =>
        pendingOf(deps, i, now).kind === 'send-restart' && i.restart?.claimedAt === action.claimedAt
          ? renew(i, now)
          : null,
      );
      if (won === null) return { acted: false, note: 'the restart was taken up meanwhile: nothing sent' };
      await sendCommand(deps, { kind: 'command', ...base, command: action.command });
      return { acted: true, note: `sent ${action.command} to ${spec.name}` };
    }
    case 'resume-failover': {
      const won = await claim(deps, event, (i) => {
        const pending = pendingOf(deps, i, now);
        return pending.kind === 'carry-out-failover' && pending.failover.claimedAt === action.step.claimedAt
          ? renew(i, now)
          : null;
      });
      if (won?.stage.name !== 'failing-over')
        return { acted: false, note: 'the failover was taken up meanwhile: nothing done' };
      await failover(deps, {
        kind: 'failover',
        node: spec.name,
        incidentId: event.incidentId,
        step: won.stage.failover,
      });
      return { acted: true, note: `resumed the failover of ${spec.name} to ${won.stage.failover.to}` };
    }
    case 'retry-failover': {
      const won = await claim(deps, event, (i) => {
        if (pendingOf(deps, i, now).kind !== 'retry-failover') return null;
        const moved = advance(i, {
          kind: 'FAILOVER_STARTED',
          failover: {
            to: action.to,
            fromEpoch: action.fromEpoch,
            claimedAt: now,
            outgoingStopped: false,
            stopOutgoing: i.kind === 'stall',
          },
        });
        return moved === null || moved === 'closed' ? null : moved;
      });
      if (won?.stage.name !== 'failing-over')
        return { acted: false, note: 'the failover was retried meanwhile: nothing done' };
      await failover(deps, {
        kind: 'failover',
        node: spec.name,
        incidentId: event.incidentId,
        step: won.stage.failover,
      });
      return { acted: true, note: `retried the failover of ${spec.name} to ${action.to}` };
    }
  }
};

/**
 * A replay: the plan, and with `execute` the one resuming step, each step claimed by CAS and
 * idempotent. A dry run only reads. The epoch guard is checked again just before acting.
 */
export const runReplay = async (deps: WatchdogDeps, request: ReplayRequest): Promise<ReplayResult> => {
  const event = await resolveEvent(deps, request.ref);
  // Every line from here on, the watchdog's steps carried out for it included, names the incident.
  return withLogFields({ incidentId: event.incidentId }, () => replayEvent(deps, request, event));
};

const replayEvent = async (deps: WatchdogDeps, request: ReplayRequest, event: FleetEvent): Promise<ReplayResult> => {
  const plan = await gather(deps, event);
  if (!request.execute) return { mode: 'dry-run', plan, executed: [], acted: false };
  if (plan.action === null) return { mode: 'execute', plan, executed: [], acted: false };
  const leader = await readLeader(deps);
  if (leader?.epoch !== plan.current.epoch)
    return {
      mode: 'execute',
      plan,
      executed: [`the epoch moved to ${leader?.epoch ?? '?'} meanwhile: nothing done`],
      acted: false,
    };
  deps.log.info({ event: event.id, action: plan.action.kind }, 'replay executes');
  const { acted, note } = await carryOutReplay(deps, event, plan.action);
  return { mode: 'execute', plan, executed: [note], acted, after: await gather(deps, event) };
};
