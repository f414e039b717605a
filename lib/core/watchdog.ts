import type { Config, NodeSpec } from './config';
import type { EventKind, EventMetrics, FleetEvent } from './events';
import type { Heartbeat, Leader } from './schemas';
import { advanceCounter, emptyCounter, isStalled, type StallCounter } from './stall';
import type { Incident, NodeWatch, WatchdogState } from './watchdog-state';

/** What the handler must carry out after the new state was stored by CAS. */
export type WatchdogAction =
  | { kind: 'publish'; event: FleetEvent }
  | { kind: 'restart'; node: string; instanceId: string; incidentId: string }
  | { kind: 'verify'; node: string; instanceId: string; incidentId: string; commandId: string; deadline: number };

export interface Verdict {
  state: WatchdogState;
  actions: WatchdogAction[];
  /** False when nothing changed: the handler skips the write. */
  changed: boolean;
}

export type WatchdogSettings = Pick<Config, 'nodes' | 'stallSamples' | 'recoverySamples' | 'restartBudgetPerHour' | 'restartVerifySeconds'>;

const HOUR_MS = 3_600_000;

const NEXT_STEP: Record<EventKind, string> = {
  STALLED: 'The watchdog restarts the worker through SSM Run Command.',
  RESTART_SENT: 'The watchdog checks the command result and watches the next samples.',
  RESTART_RESULT: 'Watching the next samples for recovery.',
  RESTART_FAILED: 'The restart did not run: check the node and its SSM agent (docs/runbook.md).',
  RESTART_BUDGET_EXHAUSTED: 'No automatic restart: the hourly budget is spent. Investigate the node.',
  STILL_STALLED: 'The restart did not heal the node: fail over to a standby (docs/runbook.md).',
  RECOVERED: 'Nothing to do.',
};

export const metricsOf = (counter: StallCounter): EventMetrics => {
  const s = counter.last;
  return {
    failingSamples: counter.failing,
    healthySamples: counter.healthy,
    fault: counter.lastFault,
    workerProcesses: s?.workerProcesses ?? null,
    cpuPercent: s === null ? null : Math.round(s.cpuPercent * 10) / 10,
    memoryBytes: s?.memoryBytes ?? null,
    backlog: s?.backlog ?? null,
    completionsInWindow: s?.completionsInWindow ?? null,
    inFlight: s?.inFlight.length ?? null,
  };
};

/** Builds the event of one incident step; its id is a pure function of incident and kind. */
export const makeEvent = (
  kind: EventKind,
  node: string,
  incident: Pick<Incident, 'id' | 'epoch'>,
  counter: StallCounter,
  now: number,
  summary: string,
  commandId?: string,
): FleetEvent => ({
  version: 1,
  id: `${incident.id}.${kind}`,
  incidentId: incident.id,
  kind,
  node,
  epoch: incident.epoch,
  at: now,
  summary,
  next: NEXT_STEP[kind],
  metrics: metricsOf(counter),
  ...(commandId === undefined ? {} : { commandId }),
});

const emptyWatch = (): NodeWatch => ({ counter: emptyCounter(), incident: null, restartTimes: [], incidents: 0 });

/** Judges the primary's new samples and moves its incident along the ladder. */
const judgePrimary = (spec: NodeSpec, watch: NodeWatch, epoch: number, now: number, s: WatchdogSettings, actions: WatchdogAction[]): NodeWatch => {
  const { counter } = watch;
  const incident = watch.incident;
  const publish = (kind: EventKind, inc: Incident, c: StallCounter, summary: string): void => {
    actions.push({ kind: 'publish', event: makeEvent(kind, spec.name, inc, c, now, summary) });
  };

  if (incident === null) {
    if (!isStalled(counter, s.stallSamples)) return watch;
    const opened: Incident = { id: `${spec.name}-e${epoch}-i${watch.incidents + 1}`, openedAt: now, epoch, restart: null, escalated: false };
    const why = counter.lastFault === 'no-worker' ? 'no worker process is alive' : 'the backlog is not shrinking and no task progressed';
    publish('STALLED', opened, counter, `${spec.name} stalled: ${counter.failing} consecutive failing samples (${why}).`);
    const recent = watch.restartTimes.filter((t) => now - t < HOUR_MS);
    if (recent.length >= s.restartBudgetPerHour) {
      publish('RESTART_BUDGET_EXHAUSTED', opened, counter, `${spec.name}: ${recent.length} restarts in the last hour, budget ${s.restartBudgetPerHour}.`);
      return { ...watch, incident: opened, restartTimes: recent, incidents: watch.incidents + 1 };
    }
    actions.push({ kind: 'restart', node: spec.name, instanceId: spec.instanceId, incidentId: opened.id });
    return {
      counter: { ...counter, failing: 0, healthy: 0 },
      incident: { ...opened, restart: { status: 'claimed', claimedAt: now } },
      restartTimes: [...recent, now],
      incidents: watch.incidents + 1,
    };
  }

  let next: NodeWatch = watch;
  const restart = incident.restart;
  if (restart?.status === 'claimed' && now - restart.claimedAt > s.restartVerifySeconds * 1000) {
    // The invocation that claimed the restart never reported sending it: treat it as undelivered.
    const failed: Incident = { ...incident, restart: { ...restart, status: 'failed', finishedAt: now, detail: 'restart claimed but never sent' } };
    publish('RESTART_FAILED', failed, counter, `${spec.name}: the restart could not be delivered.`);
    next = { ...next, incident: failed };
  } else if (restart?.status === 'sent' && restart.commandId !== undefined) {
    actions.push({ kind: 'verify', node: spec.name, instanceId: spec.instanceId, incidentId: incident.id, commandId: restart.commandId, deadline: (restart.sentAt ?? restart.claimedAt) + s.restartVerifySeconds * 1000 });
  }

  const current = next.incident ?? incident;
  if (counter.healthy >= s.recoverySamples && current.restart?.status !== 'claimed') {
    publish('RECOVERED', current, counter, `${spec.name} is healthy again: ${counter.healthy} healthy samples.`);
    return { ...next, incident: null };
  }
  if (isStalled(counter, s.stallSamples) && current.restart !== null && !current.escalated) {
    const escalated: Incident = { ...current, escalated: true };
    publish('STILL_STALLED', escalated, counter, `${spec.name} is still stalled a full window after its restart.`);
    return { ...next, incident: escalated };
  }
  return next;
};

/**
 * What must be persisted. A quiet node (no incident, no failing sample) needs only its boot:
 * re-judging its healthy samples next time gives the same answer, so the steady state costs
 * no PUT per invocation.
 */
const material = (nodes: Record<string, NodeWatch>): unknown =>
  Object.fromEntries(
    Object.entries(nodes).map(([name, w]) => [
      name,
      w.incident === null && w.counter.failing === 0 ? { boot: w.counter.boot, restartTimes: w.restartTimes, incidents: w.incidents } : w,
    ]),
  );

/**
 * The watchdog's decision for one invocation: feed every configured node's new samples into
 * its counter and move the primary's incident along the escalation ladder. Pure: the same
 * inputs give the same verdict, and samples already judged are not judged again, so a
 * duplicate or concurrent invocation that loses the state CAS and retries does nothing twice.
 */
export const decide = (
  state: WatchdogState,
  leader: Leader | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: WatchdogSettings,
): Verdict => {
  const actions: WatchdogAction[] = [];
  const nodes: Record<string, NodeWatch> = { ...state.nodes };
  for (const spec of settings.nodes) {
    let watch = nodes[spec.name] ?? emptyWatch();
    const hb = heartbeats.get(spec.name);
    if (leader !== null && leader.primary === spec.name) {
      // The stall rule applies to the node that should be consuming; a standby's idle
      // samples against a growing backlog would only be noise (and a PUT per invocation).
      if (hb !== undefined) watch = { ...watch, counter: advanceCounter(watch.counter, hb.boot, hb.samples) };
      watch = judgePrimary(spec, watch, leader.epoch, now, settings, actions);
    } else if (hb !== undefined && watch.counter.boot !== hb.boot) {
      watch = { ...watch, counter: { ...emptyCounter(), boot: hb.boot } };
    }
    nodes[spec.name] = watch;
  }
  const changed = JSON.stringify(material(nodes)) !== JSON.stringify(material(state.nodes));
  return { state: changed ? { ...state, revision: state.revision + 1, nodes } : state, actions, changed };
};

/** Outcome reducers: applied by CAS after the handler acted; idempotent for the same incident. */
export const markRestartSent = (state: WatchdogState, node: string, incidentId: string, commandId: string, now: number): { state: WatchdogState; event: FleetEvent } | null => {
  const watch = state.nodes[node];
  const incident = watch?.incident;
  if (watch === undefined || incident?.id !== incidentId || incident.restart?.status !== 'claimed') return null;
  const updated: Incident = { ...incident, restart: { ...incident.restart, status: 'sent', commandId, sentAt: now } };
  return {
    state: { ...state, revision: state.revision + 1, nodes: { ...state.nodes, [node]: { ...watch, incident: updated } } },
    event: makeEvent('RESTART_SENT', node, updated, watch.counter, now, `${node}: worker restart sent (command ${commandId}).`, commandId),
  };
};

export const markRestartResult = (
  state: WatchdogState,
  node: string,
  incidentId: string,
  ok: boolean,
  detail: string,
  now: number,
): { state: WatchdogState; event: FleetEvent } | null => {
  const watch = state.nodes[node];
  const incident = watch?.incident;
  const restart = incident?.restart;
  if (watch === undefined || incident === null || incident === undefined || incident.id !== incidentId || (restart?.status !== 'sent' && restart?.status !== 'claimed')) return null;
  const updated: Incident = { ...incident, restart: { ...restart, status: ok ? 'succeeded' : 'failed', finishedAt: now, detail: detail.slice(0, 500) } };
  const kind: EventKind = ok ? 'RESTART_RESULT' : 'RESTART_FAILED';
  return {
    state: { ...state, revision: state.revision + 1, nodes: { ...state.nodes, [node]: { ...watch, incident: updated } } },
    event: makeEvent(kind, node, updated, watch.counter, now, `${node}: restart ${ok ? 'succeeded' : 'failed'}: ${detail}`.slice(0, 1000), restart.commandId),
  };
};
