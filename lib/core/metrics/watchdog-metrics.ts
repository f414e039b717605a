import type { NodeSpec } from '../config';
import { lostAfterMs, newestSample, type Beats } from '../fleet/membership';
import { readyStandbys } from '../fleet/readiness';
import type { WatchdogAction, WatchdogSettings } from '../fleet/watchdog';
import type { WatchdogState } from '../fleet/watchdog-state';
import type { Heartbeat, Leader } from '../schemas';
import type { MetricValues } from './emf';
import { cordonedNodes, isPaused } from '../fleet/maintenance';

/** What one watchdog run saw and did, as its metrics read it. */
export interface RunView {
  /** The state before this run's verdict, and after it (the same when nothing was stored). */
  before: WatchdogState;
  after: WatchdogState;
  leader: Leader | null;
  heartbeats: ReadonlyMap<string, Heartbeat>;
  /** The beat items the run read (none: only the lease and heartbeats speak). */
  beats?: Beats;
  now: number;
  nodes: readonly NodeSpec[];
  settings: Pick<WatchdogSettings, 'sampleIntervalSeconds' | 'watchdogScheduleSeconds'>;
  /** The actions this run carried out (the events it published carry the counts they were judged at). */
  done: readonly WatchdogAction[];
  /**
   * Whether to give the gauges (ages, counts, the newest sample's figures): on the schedule and
   * the nodes' own triggers, about one run a minute. The counts of what was done come from every
   * run that did something, so their sums are exact; a run per heartbeat would add only log
   * volume (about 350 MB a month for 2 nodes, $0.18 of ingestion).
   */
  gauges: boolean;
}

/** Times in `after` that `before` lacks: what this verdict appended (restart budgets only grow). */
const added = (before: readonly number[] | undefined, after: readonly number[] | undefined): number =>
  (after ?? []).filter((t) => !(before ?? []).includes(t)).length;

/**
 * The most failing samples in a row the node reached this run: the counter restarts at 0 when a
 * restart is claimed, so the run that judged a stall would otherwise show none; its events carry
 * the count they were judged at.
 */
const failingPeak = (v: RunView, node: string): number | undefined => {
  const counted = v.after.nodes[node]?.counter.failing;
  const judged = v.done.flatMap((a) =>
    a.kind === 'publish' && a.event.node === node ? [a.event.metrics.failingSamples] : [],
  );
  return counted === undefined && judged.length === 0 ? undefined : Math.max(counted ?? 0, ...judged);
};

/** The catalogue's values for one run (lib/core/metrics/catalogue.ts); pure. */
export const watchdogMetricValues = (v: RunView): MetricValues => {
  const opened = v.nodes.reduce(
    (n, spec) =>
      n + Math.max(0, (v.after.nodes[spec.name]?.incidents ?? 0) - (v.before.nodes[spec.name]?.incidents ?? 0)),
    0,
  );
  // What the stored verdict claimed (by CAS, once, however many runs saw it): restarts and rejoin
  // restarts appended to the node's budget, a failover's cooldown started.
  const restarts = v.nodes.reduce((n, spec) => {
    const b = v.before.nodes[spec.name];
    const a = v.after.nodes[spec.name];
    return n + added(b?.restartTimes, a?.restartTimes) + added(b?.rejoinTimes, a?.rejoinTimes);
  }, 0);
  const failovers = v.after.lastFailoverAt !== null && v.after.lastFailoverAt !== v.before.lastFailoverAt ? 1 : 0;
  const counts: Record<string, number> = { IncidentsOpened: opened, Restarts: restarts, Failovers: failovers };
  if (!v.gauges) {
    const happened = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
    return { fleet: happened, nodes: {} };
  }
  const sampleMs = v.settings.sampleIntervalSeconds * 1000;
  const standbys = {
    nodes: v.nodes,
    watches: v.after.nodes,
    heartbeats: v.heartbeats,
    now: v.now,
    sampleMs,
    lostMs: lostAfterMs(v.settings),
  };
  // What an operator took out of rotation is measured by no alarmed gauge: its alarm would only
  // repeat the cordon. The watchdog's own alerts still judge the nodes left in rotation.
  const cordoned = cordonedNodes(v.after.maintenance);
  const fleet: Record<string, number> = {
    ...counts,
    Paused: isPaused(v.after.maintenance) ? 1 : 0,
    InputHeld: v.after.admission?.held === true ? 1 : 0,
  };
  if (cordoned.size === 0)
    fleet.ReadyStandbys =
      v.leader === null ? 0 : readyStandbys({ ...standbys, leader: v.leader, unready: cordoned }).length;
  if (v.leader !== null) fleet.Epoch = v.leader.epoch;
  const nodes: Record<string, Record<string, number>> = {};
  for (const spec of v.nodes) {
    const watch = v.after.nodes[spec.name];
    const last = v.heartbeats.get(spec.name)?.samples.at(-1);
    const values: Record<string, number> = { Primary: v.leader?.primary === spec.name ? 1 : 0 };
    // Each node's age by the rule that judges it: the primary's lease, the others' newest sample.
    const lease = v.leader?.primary === spec.name ? v.after.lease : undefined;
    const since = lease?.changedAt ?? watch?.newest?.changedAt;
    // A cordoned standby's silence is no incident, so no alarm either; a primary is always judged.
    const judged = v.leader?.primary === spec.name || !cordoned.has(spec.name);
    if (since !== undefined && judged) values.HeartbeatAge = Math.max(0, (v.now - since) / 1000);
    const failing = failingPeak(v, spec.name);
    if (failing !== undefined && judged) values.FailingSamples = failing;
    if (last !== undefined) {
      values.InFlight = last.inFlight.length;
      values.Completions = last.completionsInWindow;
      if (last.casConflicts !== undefined) values.CasConflicts = last.casConflicts;
      // What moves every sample without being news (agent/heartbeat-policy.ts) only from the newest
      // sample known: a quiet primary's heartbeat may be a keep-alive old, and its old CPU is no figure.
      const hb = v.heartbeats.get(spec.name);
      if (newestSample(hb, v.beats?.get(spec.name))?.seq === last.seq) {
        values.WorkerCpu = last.cpuPercent;
        values.WorkerMemory = last.memoryBytes;
        if (last.syncMs !== undefined) values.PeerSyncSeconds = last.syncMs / 1000;
        if (last.leaseLeftMs !== undefined) values.LeaseSecondsLeft = last.leaseLeftMs / 1000;
      }
    }
    nodes[spec.name] = values;
  }
  return { fleet, nodes };
};
