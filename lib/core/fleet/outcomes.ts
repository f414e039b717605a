import type { FleetEvent } from '../events';
import { advance, type Step } from './incident';
import { makeEvent } from './watchdog-events';
import type { Incident, NodeWatch, WatchdogState } from './watchdog-state';

/** Records where the origin record now points, once the route action moved (or found) it. */
export const markRouted = (state: WatchdogState, primary: string, epoch: number): Outcome =>
  state.origin?.primary === primary && state.origin.epoch === epoch
    ? null
    : { state: { ...state, revision: state.revision + 1, origin: { primary, epoch } }, event: null };

export type Outcome = { state: WatchdogState; event: FleetEvent | null } | null;

/**
 * Moves one open incident on, found by node and id: null when it is no longer open (closed,
 * or replaced by a newer one) or when `update` declines. Every claim and outcome, the
 * watchdog's and a replay's, goes through here, so each applies to the incident it was about.
 */
export const withIncident = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  update: (
    watch: NodeWatch,
    incident: Incident,
  ) => { watch: NodeWatch; event: FleetEvent | null; failoverAt?: number } | null,
): Outcome => {
  const watch = state.nodes[node];
  const incident = watch?.incident;
  if (watch === undefined || incident === null || incident === undefined || incident.id !== incidentId) return null;
  const out = update(watch, incident);
  if (out === null) return null;
  return {
    state: {
      ...state,
      revision: state.revision + 1,
      nodes: { ...state.nodes, [node]: out.watch },
      lastFailoverAt: out.failoverAt ?? state.lastFailoverAt,
    },
    event: out.event,
  };
};

/** Moves the incident one step and writes the step's event; null when its stage does not take the step. */
const stepIncident = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  step: Step,
  event: (watch: NodeWatch, incident: Incident) => FleetEvent | null,
  failoverAt?: number,
): Outcome =>
  withIncident(state, node, incidentId, (watch, incident) => {
    const moved = advance(incident, step);
    if (moved === null) return null;
    return {
      watch: { ...watch, incident: moved === 'closed' ? null : moved },
      event: event(watch, incident),
      ...(failoverAt === undefined ? {} : { failoverAt }),
    };
  });

/** Outcome reducers: applied by CAS after the handler acted; idempotent for the same incident. */
export const markRestartSent = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  commandId: string,
  now: number,
): Outcome =>
  stepIncident(state, node, incidentId, { kind: 'RESTART_SENT', at: now, commandId }, (watch, incident) => {
    const what = incident.restart?.command === 'restartAgent' ? 'agent' : 'worker';
    return makeEvent(
      'RESTART_SENT',
      node,
      incident,
      watch.counter,
      now,
      `${node}: ${what} restart sent (command ${commandId}).`,
      { commandId },
    );
  });

export const markRestartResult = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  ok: boolean,
  detail: string,
  now: number,
): Outcome =>
  stepIncident(
    state,
    node,
    incidentId,
    { kind: ok ? 'RESTART_RESULT' : 'RESTART_FAILED', at: now, detail },
    (watch, incident) => {
      const commandId = incident.restart?.commandId;
      return makeEvent(
        ok ? 'RESTART_RESULT' : 'RESTART_FAILED',
        node,
        incident,
        watch.counter,
        now,
        `${node}: restart ${ok ? 'succeeded' : 'failed'}: ${detail}`,
        commandId === undefined ? {} : { commandId },
      );
    },
  );

/** Closes the incident once its failover is carried out (or records why it failed). */
export const markFailover = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  ok: boolean,
  detail: string,
  now: number,
): Outcome =>
  ok
    ? stepIncident(state, node, incidentId, { kind: 'FAILOVER_DONE' }, () => null, now)
    : stepIncident(state, node, incidentId, { kind: 'FAILOVER_FAILED', at: now, detail }, (watch, incident) =>
        makeEvent('FAILOVER_FAILED', node, incident, watch.counter, now, `${node}: failover failed: ${detail}`),
      );

/**
 * A person's failover: the cooldown runs from it (not after `--ignore-readiness`, whose target may not take
 * over), and the old primary's open incident is superseded, as its node no longer holds the role.
 */
export const noteManualFailover = (
  state: WatchdogState,
  from: string,
  now: number,
  cooldown: boolean,
): WatchdogState => {
  const watch = state.nodes[from];
  const open = watch?.incident ?? null;
  const closed = open === null ? null : stepIncident(state, from, open.id, { kind: 'SUPERSEDED' }, () => null);
  return {
    ...(closed?.state ?? state),
    revision: state.revision + 1,
    lastFailoverAt: cooldown ? now : state.lastFailoverAt,
  };
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
  return {
    ...after,
    revision: state.revision + 1,
    nodes: { ...after.nodes, [node]: { ...nodeAfter, rejoinTimes: [] } },
  };
};
