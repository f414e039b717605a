import { judgeNode, type LadderContext, type WatchdogAction, type WatchdogSettings } from './ladder';
import { leaseStale, observeLease, staleAfterMs, takenOverFrom, type Confirmation } from './liveness';
import { isLost, lostAfterMs, newestSample, observe, restartClocks, type Beats } from './membership';
import { cannotWork, readyStandbys } from './readiness';
import { decideAdmission, emptyAdmission, failoverUnderWay, type AdmissionSettings } from './admission';
import type { Heartbeat, Leader } from '../schemas';
import { advanceCounter, emptyCounter } from './stall';
import { emptyWatch, type NodeWatch, type WatchdogState } from './watchdog-state';
import { withDeadLetters, withRise } from './dead-letters';
import { withIntakeWait } from './intake-wait';
import { withLeaderRepair, type LeaderDamage } from './repair';
import { cordonedNodes, isPaused, settlePause } from './maintenance';

export type { WatchdogAction, WatchdogSettings };

export interface Decision {
  state: WatchdogState;
  actions: WatchdogAction[];
  /** False when nothing worth storing changed: the handler skips the write. */
  changed: boolean;
}

/** Queue depths as read: the task queue's backlog, intake, and the queues only failures reach. */
export interface Depths {
  backlog: number;
  intake: number;
  deadLetters?: number;
  notifierFailures?: number;
}

/** Everything one run gathered before it decides. */
export interface Inputs {
  now: number;
  leader: Leader | null;
  heartbeats: ReadonlyMap<string, Heartbeat>;
  beats?: Beats;
  /** What Lightsail and SSM said of the nodes `suspects` named. */
  confirmations?: ReadonlyMap<string, Confirmation>;
  /** The watchdog's own runs failed until this one: it could not see. */
  blind?: boolean;
  /** Absent: no intake queue (no admission); null: the depths could not be read this run. */
  depths?: Depths | null;
  damage?: LeaderDamage | null;
}

export type Settings = WatchdogSettings & Partial<AdmissionSettings> & { intakeWaitAlertSeconds?: number };

/**
 * What must be persisted: the judgement and the clocks to the nearest sample interval. A healthy
 * fleet then costs about one PUT per interval; a newer sample left unstored is dated by the next run.
 */
const material = (state: WatchdogState, sampleMs: number): unknown => {
  const at = (t: number | null | undefined): number | null =>
    t === null || t === undefined ? null : Math.floor(t / sampleMs);
  const nodes = Object.entries(state.nodes).map(([name, w]): [string, unknown] => {
    const quiet = w.incident === null && w.counter.failing === 0;
    const newest = w.newest === null ? null : [w.newest.boot, at(w.newest.changedAt)];
    return [name, quiet ? { ...w, counter: { boot: w.counter.boot }, newest } : w];
  });
  const lease = state.lease === undefined ? null : [state.lease.primary, state.lease.epoch, at(state.lease.changedAt)];
  const { origin = null, maintenance = null } = state;
  return { origin, maintenance, judged: at(state.judgedAt), lease, nodes: Object.fromEntries(nodes) };
};

/** The clocks after this run's reads: every node's newest sample and the lease, restarted after a blind spell. */
const observeAll = (state: WatchdogState, i: Inputs, settings: WatchdogSettings) => {
  const lostMs = lostAfterMs(settings);
  const blind = i.blind === true || (state.judgedAt !== null && i.now - state.judgedAt >= lostMs);
  const nodes: Record<string, NodeWatch> = blind ? restartClocks(state.nodes, i.now) : { ...state.nodes };
  for (const spec of settings.nodes) {
    const newest = newestSample(i.heartbeats.get(spec.name), i.beats?.get(spec.name));
    nodes[spec.name] = observe(nodes[spec.name] ?? emptyWatch(), newest, i.now);
  }
  const known = blind && state.lease !== undefined ? { ...state.lease, changedAt: i.now } : state.lease;
  const lease = observeLease(known, i.leader, i.now);
  const stale = i.leader !== null && leaseStale(lease, i.now, staleAfterMs(settings));
  return { nodes, lease, lostMs, stale, takenOver: takenOverFrom(state.lease, i.leader) };
};

/** The nodes the watchdog asks Lightsail and SSM about this run: judged gone, or about to be. */
export const suspects = (state: WatchdogState, i: Inputs, settings: WatchdogSettings): string[] => {
  const seen = observeAll(state, i, settings);
  return settings.nodes
    .map((n) => n.name)
    .filter((name) => {
      if (name === seen.takenOver) return true;
      if (name === i.leader?.primary) return seen.stale;
      const watch = seen.nodes[name];
      return watch !== undefined && isLost(watch, i.now, seen.lostMs);
    });
};

/** Every node's judgement, and the origin record kept on the primary the lease names. */
const judge = (state: WatchdogState, i: Inputs, settings: WatchdogSettings): Decision => {
  const sampleMs = settings.sampleIntervalSeconds * 1000;
  const seen = observeAll(state, i, settings);
  const nodes = seen.nodes;
  const maintenance = settlePause(state.maintenance, i.now);
  const cordoned = cordonedNodes(maintenance);
  for (const spec of settings.nodes) {
    const hb = i.heartbeats.get(spec.name);
    const watch = nodes[spec.name] ?? emptyWatch();
    // The stall rule applies to the node that should be consuming; a standby's idle samples would be noise.
    if (hb === undefined) continue;
    if (i.leader?.primary === spec.name)
      nodes[spec.name] = { ...watch, counter: advanceCounter(watch.counter, hb.boot, hb.samples) };
    else if (watch.counter.boot !== hb.boot)
      nodes[spec.name] = { ...watch, counter: { ...emptyCounter(), boot: hb.boot } };
  }
  const ctx: LadderContext = {
    now: i.now,
    settings,
    leader: i.leader,
    heartbeats: i.heartbeats,
    confirmations: i.confirmations ?? new Map(),
    watches: nodes,
    unready: new Set([...cannotWork(i.beats), ...cordoned]),
    cordoned,
    paused: isPaused(maintenance),
    lastFailoverAt: state.lastFailoverAt,
    lostMs: seen.lostMs,
    leaseStale: seen.stale,
    takenOverFrom: seen.takenOver,
    actions: [],
  };
  for (const spec of settings.nodes) nodes[spec.name] = judgeNode(ctx, spec, nodes[spec.name] ?? emptyWatch());
  // Traffic follows the lease: whoever leader.json names, however it got the role.
  const { leader } = i;
  if (
    settings.routed === true &&
    leader !== null &&
    (state.origin?.primary !== leader.primary || state.origin.epoch !== leader.epoch)
  ) {
    ctx.actions.push({ kind: 'route', primary: leader.primary, epoch: leader.epoch });
  }
  const next: WatchdogState = {
    ...state,
    nodes,
    ...(maintenance === undefined ? {} : { maintenance }),
    judgedAt: i.now,
    ...(seen.lease === undefined ? {} : { lease: seen.lease }),
  };
  const changed = JSON.stringify(material(next, sampleMs)) !== JSON.stringify(material(state, sampleMs));
  return { state: changed ? { ...next, revision: state.revision + 1 } : state, actions: ctx.actions, changed };
};

/**
 * The watchdog's decision for one run: judge every node, then admission, the failure queues,
 * waiting input and a damaged leader record. Pure: samples already judged are not judged again,
 * so a run that loses the state's CAS and decides again does nothing twice.
 */
export const decide = (state: WatchdogState, i: Inputs, settings: Settings): Decision => {
  const judged = judge(state, i, settings);
  const { admissionHighMark, admissionLowMark } = settings;
  const admitted =
    i.depths === undefined || admissionHighMark === undefined || admissionLowMark === undefined
      ? judged
      : withAdmission(judged, i.depths, i.leader, i.heartbeats, i.now, {
          ...settings,
          admissionHighMark,
          admissionLowMark,
        });
  const depths = i.depths ?? null;
  const risen = withRise(
    'notifierFailures',
    withDeadLetters(admitted, depths?.deadLetters, i.leader, i.now),
    depths?.notifierFailures,
    i.leader,
    i.now,
  );
  const waitMs = (settings.intakeWaitAlertSeconds ?? 0) * 1000;
  const watched =
    settings.intakeWaitAlertSeconds === undefined
      ? risen
      : withIntakeWait(risen, depths?.intake, i.leader, i.now, waitMs);
  return withLeaderRepair(watched, i.damage ?? null, i.heartbeats, i.now, settings);
};

/**
 * Admission after the round's judgement (backpressure): whether input from the intake queue is
 * held, from this round's incidents and standbys and the queues' depths, and how much to admit.
 * Every run may hold input; only a run that read the queues' depths resumes or admits. Pure.
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
  const sampleMs = settings.sampleIntervalSeconds * 1000;
  const standbys = {
    nodes: settings.nodes,
    watches: state.nodes,
    heartbeats,
    now,
    sampleMs,
    lostMs: lostAfterMs(settings),
  };
  const unready = cordonedNodes(state.maintenance);
  const ready = leader === null ? 0 : readyStandbys({ ...standbys, leader, unready }).length;
  const before = state.admission ?? emptyAdmission();
  const input = { depths, readyStandbys: ready, failingOver: failoverUnderWay(state.nodes, leader) };
  const out = decideAdmission(before, input, settings, now, leader);
  // Its alert goes out with the round's own alerts, before the slower steps (a failover's stop and promotion).
  const failing = verdict.actions.findIndex((a) => a.kind === 'failover');
  const at = failing === -1 ? verdict.actions.length : failing;
  const actions: WatchdogAction[] = [
    ...verdict.actions.slice(0, at),
    ...(out.event === null ? [] : [{ kind: 'publish' as const, event: out.event }]),
    ...verdict.actions.slice(at),
    ...(out.admit > 0 ? [{ kind: 'admit' as const, count: out.admit }] : []),
  ];
  const same =
    out.admission === state.admission ||
    (state.admission === undefined && JSON.stringify(out.admission) === JSON.stringify(before));
  if (same) return { ...verdict, actions };
  const revision = verdict.changed ? state.revision : state.revision + 1;
  return { state: { ...state, admission: out.admission, revision }, actions, changed: true };
};
