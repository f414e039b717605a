import type { FleetEvent } from '../events';
import { judgeNode, type LadderContext, type WatchdogAction, type WatchdogSettings } from './ladder';
import { cannotWork, CLEAR_SIGHT, readyStandbys, regainSight, seenBy, type Confirmation, type Sight } from './liveness';
import { decideAdmission, emptyAdmission, failoverUnderWay, type AdmissionSettings } from './admission';
import type { Heartbeat, Leader } from '../schemas';
import { advanceCounter, emptyCounter } from './stall';
import { advance, type Step } from './incident';
import { makeEvent } from './watchdog-events';
import { emptyWatch, type Incident, type NodeWatch, type WatchdogState } from './watchdog-state';

export type { WatchdogAction, WatchdogSettings };

export interface Decision {
  state: WatchdogState;
  actions: WatchdogAction[];
  /** False when nothing worth storing changed: the handler skips the write. */
  changed: boolean;
}


/**
 * What must be persisted. A quiet node (no incident, no failing sample) needs only its boot and
 * when its newest sample was seen, and that only to the nearest sample interval: re-judging its
 * healthy samples gives the same answer, so a healthy fleet costs about one PUT per interval.
 */
const material = (state: Pick<WatchdogState, 'nodes' | 'origin' | 'judgedAt'>, sampleMs: number): unknown => ({
  origin: state.origin ?? null,
  judged: state.judgedAt === null ? null : Math.floor(state.judgedAt / sampleMs),
  nodes: Object.fromEntries(
    Object.entries(state.nodes).map(([name, w]) => [
      name,
      w.incident === null && w.counter.failing === 0
        ? { boot: w.counter.boot, restartTimes: w.restartTimes, rejoinTimes: w.rejoinTimes, incidents: w.incidents, seen: w.seen === null ? null : [w.seen.boot, Math.floor(w.seen.at / sampleMs)] }
        : w,
    ]),
  ),
});

/**
 * Sample intervals between the stored judgement's and now's that mean no run got through when
 * one should have: three (two whole ones unjudged), or more when the schedule's runs are that far
 * apart. EventBridge fires a rate schedule somewhere within each period, so two runs can be
 * almost two periods apart (docs/aws-behaviour.md, eventBridgeSchedule); nodes invoke the
 * watchdog only with news, so in a quiet fleet the schedule's are most of its runs.
 */
export const unseenIntervals = (sampleMs: number, scheduleMs: number): number => Math.max(3, Math.ceil((2 * scheduleMs) / sampleMs) + 1);

/** Failed heartbeat writes in a row that show S3 refusing the node: two sample intervals of it. */
const UNSENT_IS_OUTAGE = 2;

/**
 * True when a node says, in a heartbeat this watchdog has not seen before (a sample newer than
 * it knows of the node), that its heartbeats before it could not be written: S3 was down for it,
 * likely for the watchdog too. The same object read again says nothing new: the primary
 * rewrites its heartbeat only with news, and an old outage must not blind every later run.
 */
const s3WasDown = (heartbeats: ReadonlyMap<string, Heartbeat>, watches: Readonly<Record<string, NodeWatch>>): boolean =>
  [...heartbeats.entries()].some(([name, hb]) => {
    if ((hb.unsent ?? 0) < UNSENT_IS_OUTAGE) return false;
    const seen = watches[name]?.seen ?? null;
    return seen === null || seen.boot !== hb.boot || hb.samples.some((s) => s.seq > seen.seq);
  });

/**
 * The watchdog's decision for one invocation: note every node's newest sample, feed the
 * primary's new samples into its stall counter, and move each node's incident along the
 * ladder (DESIGN section 4). Pure: samples already judged are not judged again, so a duplicate
 * or concurrent invocation that loses the state CAS and retries does nothing twice.
 */
export const decide = (
  state: WatchdogState,
  leader: Leader | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: WatchdogSettings,
  confirmations: ReadonlyMap<string, Confirmation> = new Map(),
  /** What the caller could see: its runs failing until now, or this run's reads troubled. */
  sight: Sight = CLEAR_SIGHT,
): Decision => {
  const sampleMs = settings.sampleIntervalSeconds * 1000;
  // Silence the watchdog did not see happen proves nothing. After its own runs failed, when a
  // node says S3 refused its heartbeats, or when no judgement was stored for longer than the
  // schedule explains (unseenIntervals: no run got through, S3 down for everyone, or the
  // watchdog not invoked; this container may be a fresh one that saw no failure), it was blind
  // for an unknown time: every node's silence counts again from now. A judgement is stored at
  // least once per interval while runs get through, so the stored time is compared by interval. When only this
  // run's look was troubled, S3 answered in the end: only that look's time is not counted (a
  // node refused in it misses one heartbeat, which the two-interval threshold allows).
  const unseen = state.judgedAt !== null && Math.floor(now / sampleMs) - Math.floor(state.judgedAt / sampleMs) >= unseenIntervals(sampleMs, (settings.watchdogScheduleSeconds ?? 60) * 1000);
  const blindFrom = sight.failing || s3WasDown(heartbeats, state.nodes) || unseen ? -Infinity : sight.troubledSince;
  const nodes: Record<string, NodeWatch> = blindFrom === null ? { ...state.nodes } : regainSight(state.nodes, blindFrom, now);
  // First every node's freshness, so choosing a standby sees this round's heartbeats.
  for (const spec of settings.nodes) {
    let watch = seenBy(nodes[spec.name] ?? emptyWatch(), heartbeats.get(spec.name), now, spec.name, leader, sight);
    const hb = heartbeats.get(spec.name);
    if (leader !== null && leader.primary === spec.name) {
      if (hb !== undefined) watch = { ...watch, counter: advanceCounter(watch.counter, hb.boot, hb.samples) };
    } else if (hb !== undefined && watch.counter.boot !== hb.boot) {
      // The stall rule applies to the node that should be consuming; a standby's idle samples
      // against a growing backlog would only be noise.
      watch = { ...watch, counter: { ...emptyCounter(), boot: hb.boot } };
    }
    nodes[spec.name] = watch;
  }
  const ctx: LadderContext = { now, settings, leader, heartbeats, confirmations, watches: nodes, unready: cannotWork(sight.beats), lastFailoverAt: state.lastFailoverAt, actions: [] };
  for (const spec of settings.nodes) nodes[spec.name] = judgeNode(ctx, spec, nodes[spec.name] ?? emptyWatch());
  // Traffic follows the lease: whoever leader.json names, however it got the role.
  if (settings.routed && leader !== null && (state.origin?.primary !== leader.primary || state.origin.epoch !== leader.epoch)) {
    ctx.actions.push({ kind: 'route', primary: leader.primary, epoch: leader.epoch });
  }
  const next: WatchdogState = { ...state, nodes, judgedAt: now };
  const changed = JSON.stringify(material(next, sampleMs)) !== JSON.stringify(material(state, sampleMs));
  return { state: changed ? { ...next, revision: state.revision + 1 } : state, actions: ctx.actions, changed };
};

/**
 * Admission after the round's judgement (backpressure): whether input from the intake queue is
 * held, from this round's incidents and standbys and the queues' depths, and how much to admit.
 * Every run may hold input (the run that starts a failover holds it at once); only a run that
 * read the queues' depths resumes or admits. Transitions are alerted (INPUT_HELD,
 * INPUT_RESUMED) and stored with the verdict. Pure.
 */
export const withAdmission = (
  verdict: Decision,
  depths: { backlog: number; intake: number } | null,
  leader: Leader | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: WatchdogSettings & AdmissionSettings,
): Decision => {
  const state = verdict.state;
  const ready = leader === null ? 0 : readyStandbys(settings.nodes, state.nodes, heartbeats, leader, now, settings.sampleIntervalSeconds * 1000).length;
  const before = state.admission ?? emptyAdmission();
  const out = decideAdmission(before, { depths, readyStandbys: ready, failingOver: failoverUnderWay(state.nodes, leader) }, settings, now, leader);
  // Its alert goes out with the round's own alerts, before the slower steps (a failover's stop and promotion).
  const failing = verdict.actions.findIndex((a) => a.kind === 'failover');
  const at = failing === -1 ? verdict.actions.length : failing;
  const actions: WatchdogAction[] = [
    ...verdict.actions.slice(0, at),
    ...(out.event === null ? [] : [{ kind: 'publish' as const, event: out.event }]),
    ...verdict.actions.slice(at),
    ...(out.admit > 0 ? [{ kind: 'admit' as const, count: out.admit }] : []),
  ];
  if (out.admission === state.admission || (state.admission === undefined && JSON.stringify(out.admission) === JSON.stringify(before))) return { ...verdict, actions };
  return { state: { ...state, admission: out.admission, revision: verdict.changed ? state.revision : state.revision + 1 }, actions, changed: true };
};

/** Records where the origin record now points, once the route action moved (or found) it. */
export const markRouted = (state: WatchdogState, primary: string, epoch: number): Outcome =>
  state.origin?.primary === primary && state.origin.epoch === epoch ? null : { state: { ...state, revision: state.revision + 1, origin: { primary, epoch } }, event: null };

export type Outcome = { state: WatchdogState; event: FleetEvent | null } | null;

/**
 * Moves one open incident on, found by node and id: null when it is no longer open (closed,
 * or replaced by a newer one) or when `update` declines. Every claim and outcome, the
 * watchdog's and a replay's, goes through here, so each applies to the incident it was about.
 */
export const withIncident = (state: WatchdogState, node: string, incidentId: string, update: (watch: NodeWatch, incident: Incident) => { watch: NodeWatch; event: FleetEvent | null; failoverAt?: number } | null): Outcome => {
  const watch = state.nodes[node];
  const incident = watch?.incident;
  if (watch === undefined || incident === null || incident === undefined || incident.id !== incidentId) return null;
  const out = update(watch, incident);
  if (out === null) return null;
  return {
    state: { ...state, revision: state.revision + 1, nodes: { ...state.nodes, [node]: out.watch }, lastFailoverAt: out.failoverAt ?? state.lastFailoverAt },
    event: out.event,
  };
};

/** Moves the incident one step and writes the step's event; null when its stage does not take the step. */
const stepIncident = (state: WatchdogState, node: string, incidentId: string, step: Step, event: (watch: NodeWatch, incident: Incident) => FleetEvent | null, failoverAt?: number): Outcome =>
  withIncident(state, node, incidentId, (watch, incident) => {
    const moved = advance(incident, step);
    if (moved === null) return null;
    return { watch: { ...watch, incident: moved === 'closed' ? null : moved }, event: event(watch, incident), ...(failoverAt === undefined ? {} : { failoverAt }) };
  });

/** Outcome reducers: applied by CAS after the handler acted; idempotent for the same incident. */
export const markRestartSent = (state: WatchdogState, node: string, incidentId: string, commandId: string, now: number): Outcome =>
  stepIncident(state, node, incidentId, { kind: 'RESTART_SENT', at: now, commandId }, (watch, incident) => {
    const what = incident.restart?.command === 'restartAgent' ? 'agent' : 'worker';
    return makeEvent('RESTART_SENT', node, incident, watch.counter, now, `${node}: ${what} restart sent (command ${commandId}).`, { commandId });
  });

export const markRestartResult = (state: WatchdogState, node: string, incidentId: string, ok: boolean, detail: string, now: number): Outcome =>
  stepIncident(state, node, incidentId, { kind: ok ? 'RESTART_RESULT' : 'RESTART_FAILED', at: now, detail }, (watch, incident) => {
    const commandId = incident.restart?.commandId;
    return makeEvent(ok ? 'RESTART_RESULT' : 'RESTART_FAILED', node, incident, watch.counter, now, `${node}: restart ${ok ? 'succeeded' : 'failed'}: ${detail}`, commandId === undefined ? {} : { commandId });
  });

/** Closes the incident once its failover is carried out (or records why it failed). */
export const markFailover = (state: WatchdogState, node: string, incidentId: string, ok: boolean, detail: string, now: number): Outcome =>
  ok
    ? stepIncident(state, node, incidentId, { kind: 'FAILOVER_DONE' }, () => null, now)
    : stepIncident(state, node, incidentId, { kind: 'FAILOVER_FAILED', at: now, detail }, (watch, incident) => makeEvent('FAILOVER_FAILED', node, incident, watch.counter, now, `${node}: failover failed: ${detail}`));

/**
 * A failover made by a person (`fleet failover`): the cooldown runs from it as from the
 * watchdog's own (not after `--force`: a forced target may not take over, and then the
 * watchdog must be free to fail over again), and the old primary's open incident is closed
 * (SUPERSEDED: its node no longer holds the role, so its ladder is over; a claimed failover
 * of it would only be superseded).
 */
export const noteManualFailover = (state: WatchdogState, from: string, now: number, cooldown: boolean): WatchdogState => {
  const watch = state.nodes[from];
  const open = watch?.incident ?? null;
  const closed = open === null ? null : stepIncident(state, from, open.id, { kind: 'SUPERSEDED' }, () => null);
  return { ...(closed?.state ?? state), revision: state.revision + 1, lastFailoverAt: cooldown ? now : state.lastFailoverAt };
};

/**
 * A rejoin asked for by a person (`fleet rejoin NODE`): the node's open rejoin incident is
 * closed (SUPERSEDED: the person's restart replaces the watchdog's) and its rejoin budget starts
 * afresh, so the watchdog may try again should this one not take. Null when nothing changes.
 */
export const noteManualRejoin = (state: WatchdogState, node: string): WatchdogState | null => {
  const watch = state.nodes[node];
  if (watch === undefined) return null;
  const open = watch.incident?.kind === 'rejoin' ? watch.incident : null;
  if (open === null && watch.rejoinTimes.length === 0) return null;
  const closed = open === null ? null : stepIncident(state, node, open.id, { kind: 'SUPERSEDED' }, () => null);
  const after = closed?.state ?? state;
  const nodeAfter = after.nodes[node] ?? watch;
  return { ...after, revision: state.revision + 1, nodes: { ...after.nodes, [node]: { ...nodeAfter, rejoinTimes: [] } } };
};
