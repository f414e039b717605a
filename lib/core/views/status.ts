import type { NodeSpec } from '../config';
import type { FleetEvent } from '../events';
import type { HeartbeatObservation, Observed } from './observed';
import { valueOf } from './observed';
import { isFresh } from './readiness';
import type { Heartbeat, Leader } from '../schemas';
import type { Incident, StageName } from '../fleet/incident';
import { isPaused, noMaintenance, type Maintenance } from '../fleet/maintenance';
import { emptyWatchdogState, type NodeWatch, type WatchdogState } from '../fleet/watchdog-state';
import type { MetricValues } from '../metrics/emf';
import { watchdogMetricValues } from '../metrics/watchdog-metrics';
import { describeRole } from './role';

/** The task queue as read: depth, or why it could not be read. */
export type QueueObservation =
  { state: 'not-configured' } | { state: 'ok'; visible: number; inFlight: number } | { state: 'error'; error: string };

/** Everything `fleet status` shows, gathered by `lib/ops/status.ts`. */
export interface StatusInput {
  nodes: readonly NodeSpec[];
  sampleIntervalSeconds: number;
  /** The primary's heartbeat keep-alive: its object is rewritten only with news, at least this often. */
  heartbeatKeepAliveSeconds: number;
  leader: Observed<Leader>;
  /** One entry per configured node. */
  heartbeats: ReadonlyMap<string, HeartbeatObservation>;
  /** Nodes with a heartbeat that the configuration does not name. */
  strays: readonly string[];
  watchdog: Observed<WatchdogState>;
  queue: QueueObservation;
  /** The newest object under events/ and its key; null when there is none. */
  lastEvent: StoredEvent | null;
  /** The newest PROMOTED event (watchdog or manual failover); null when there is none. */
  lastPromotion: StoredEvent | null;
  now: number;
}

/** An event object as read, with its key. */
export interface StoredEvent {
  key: string;
  event: Observed<FleetEvent>;
}

export interface IncidentStatus {
  id: string;
  kind: Incident['kind'];
  openedAt: number;
  /** The incident's stage in the ladder's state machine (lib/core/fleet/incident.ts). */
  stage: StageName;
  /** Why a failover is wanted (escalating), or why it failed (failover-failed); null otherwise. */
  why: string | null;
  /** The standby a claimed or failed failover goes to. */
  failoverTo: string | null;
}

export type HeartbeatStatus =
  | {
      state: 'ok';
      /** Now minus the newest sample's time: the node's clock, so skew shows here. */
      ageSeconds: number | null;
      /** Now minus S3's Last-Modified of the object: what freshness is judged by. */
      writtenSecondsAgo: number | null;
      /** Written within two sample intervals (the watchdog's silence rule). */
      fresh: boolean;
      agentVersion: string;
    }
  | { state: 'missing' }
  | { state: 'corrupt'; error: string };

export interface NodeStatus {
  name: string;
  /** The availability zone the configuration gives the node; null when it gives none. */
  zone: string | null;
  /** The role the node's agent reports in its heartbeat; null without a readable one. */
  role: Heartbeat['role'] | null;
  /** What leader.json makes it; null when leader.json is missing or corrupt. */
  designated: 'primary' | 'standby' | null;
  /** Set when the two disagree: a node between syncs, or one that has not fenced itself yet. */
  roleNote: string | null;
  heartbeat: HeartbeatStatus;
  epochSeen: number | null;
  workerProcesses: number | null;
  cpuPercent: number | null;
  backlog: number | null;
  /** The watchdog's consecutive failing / healthy samples; null when it keeps none for the node. */
  stall: { failing: number; healthy: number; fault: 'no-worker' | 'no-progress' | null } | null;
  incident: IncidentStatus | null;
}

export type LeaderStatus =
  | {
      state: 'ok';
      primary: string;
      epoch: number;
      handover: Leader['handover'];
      previous: string | null;
      changedBy: string;
      reason: string;
    }
  | { state: 'missing' }
  | { state: 'corrupt'; error: string };

export type LastFailover =
  | { state: 'none' }
  | {
      state: 'ok';
      at: number;
      incidentId: string;
      manual: boolean;
      from: string;
      newPrimary: string | null;
      newEpoch: number | null;
    }
  | { state: 'corrupt'; key: string; error: string };

export type LastIncident =
  | { state: 'none' }
  | {
      state: 'ok';
      incidentId: string;
      kind: FleetEvent['kind'];
      node: string;
      epoch: number;
      at: number;
      summary: string;
    }
  | { state: 'corrupt'; key: string; error: string };

/** The JSON document of `fleet status --json` (without `where`, which the command adds). */
export interface StatusView {
  at: number;
  leader: LeaderStatus;
  watchdog: {
    state: 'ok' | 'missing' | 'corrupt';
    error: string | null;
    lastFailoverAt: number | null;
    /** The operator's pause and cordons (`fleet pause`, `fleet cordon`); `paused` until the watchdog ends it. */
    maintenance: Maintenance;
    paused: boolean;
  };
  queue: QueueObservation | { state: 'ok'; visible: number; inFlight: number; depth: number };
  /** The newest PROMOTED event: failovers by the watchdog and by `fleet failover` alike. */
  lastFailover: LastFailover;
  lastIncident: LastIncident;
  nodes: NodeStatus[];
  strays: string[];
  /**
   * The catalogue's metrics as the watchdog would publish them now, at `detailed`, by the same
   * function (lib/core/metrics/watchdog-metrics.ts) from the same objects: what the dashboard shows.
   * The counts (incidents opened, restarts, failovers) are a run's own and are left out.
   */
  metrics: MetricValues;
}

const tenths = (ms: number): number => Math.round(ms / 100) / 10;

const heartbeatStatus = (obs: HeartbeatObservation | undefined, input: StatusInput): HeartbeatStatus => {
  const hb = obs?.heartbeat ?? { state: 'missing' as const };
  if (hb.state !== 'ok') return hb;
  const newest = hb.value.samples.at(-1);
  const writtenAt = obs?.writtenAt ?? null;
  return {
    state: 'ok',
    ageSeconds: newest === undefined ? null : tenths(input.now - newest.at),
    writtenSecondsAgo: writtenAt === null ? null : tenths(input.now - writtenAt),
    fresh: isFresh(obs, input.now, {
      sampleMs: input.sampleIntervalSeconds * 1000,
      keepAliveMs: input.heartbeatKeepAliveSeconds * 1000,
      holder: valueOf(input.leader)?.primary ?? null,
    }),
    agentVersion: hb.value.agentVersion,
  };
};

const incidentStatus = (watch: NodeWatch | undefined): IncidentStatus | null => {
  const incident = watch?.incident ?? null;
  if (incident === null) return null;
  const { stage } = incident;
  return {
    id: incident.id,
    kind: incident.kind,
    openedAt: incident.openedAt,
    stage: stage.name,
    why: stage.name === 'escalating' ? stage.why : stage.name === 'failover-failed' ? stage.detail : null,
    failoverTo: stage.name === 'failing-over' || stage.name === 'failover-failed' ? stage.failover.to : null,
  };
};

const nodeStatus = (
  spec: NodeSpec,
  input: StatusInput,
  leader: Leader | null,
  watchdog: WatchdogState | null,
): NodeStatus => {
  const obs = input.heartbeats.get(spec.name);
  const hb = valueOf(obs?.heartbeat);
  const last = hb?.samples.at(-1) ?? null;
  const watch = watchdog?.nodes[spec.name];
  return {
    name: spec.name,
    zone: spec.zone ?? null,
    ...describeRole(spec.name, leader, hb),
    heartbeat: heartbeatStatus(obs, input),
    epochSeen: last?.epochSeen ?? null,
    workerProcesses: last?.workerProcesses ?? null,
    cpuPercent: last === null ? null : Math.round(last.cpuPercent * 10) / 10,
    backlog: last?.backlog ?? null,
    stall:
      watch === undefined
        ? null
        : { failing: watch.counter.failing, healthy: watch.counter.healthy, fault: watch.counter.lastFault },
    incident: incidentStatus(watch),
  };
};

const leaderStatus = (o: Observed<Leader>): LeaderStatus => {
  if (o.state !== 'ok') return o;
  const { primary, epoch, handover, previous, changedBy, reason } = o.value;
  return { state: 'ok', primary, epoch, handover, previous, changedBy, reason };
};

const lastIncident = (last: StatusInput['lastEvent']): LastIncident => {
  if (last === null || last.event.state === 'missing') return { state: 'none' };
  if (last.event.state === 'corrupt') return { state: 'corrupt', key: last.key, error: last.event.error };
  const { incidentId, kind, node, epoch, at, summary } = last.event.value;
  return { state: 'ok', incidentId, kind, node, epoch, at, summary };
};

const lastFailover = (last: StatusInput['lastPromotion']): LastFailover => {
  if (last === null || last.event.state === 'missing') return { state: 'none' };
  if (last.event.state === 'corrupt') return { state: 'corrupt', key: last.key, error: last.event.error };
  const e = last.event.value;
  return {
    state: 'ok',
    at: e.at,
    incidentId: e.incidentId,
    manual: e.incidentId.startsWith('manual-'),
    from: e.node,
    newPrimary: e.newPrimary ?? null,
    newEpoch: e.newEpoch ?? null,
  };
};

/**
 * The fleet as `fleet status` shows it: per node its reported and designated role, heartbeat,
 * latest metrics, stall counters and open incident; fleet-wide the primary and epoch, the last
 * failover, the queue depth and the last incident. Missing and corrupt objects are shown as such.
 */
export const buildStatus = (input: StatusInput): StatusView => {
  const leader = valueOf(input.leader);
  const watchdog = valueOf(input.watchdog);
  const q = input.queue;
  return {
    at: input.now,
    leader: leaderStatus(input.leader),
    watchdog: {
      state: input.watchdog.state,
      error: input.watchdog.state === 'corrupt' ? input.watchdog.error : null,
      lastFailoverAt: watchdog?.lastFailoverAt ?? null,
      maintenance: watchdog?.maintenance ?? noMaintenance(),
      paused: isPaused(watchdog?.maintenance),
    },
    queue: q.state === 'ok' ? { ...q, depth: q.visible + q.inFlight } : q,
    lastFailover: lastFailover(input.lastPromotion),
    lastIncident: lastIncident(input.lastEvent),
    nodes: input.nodes.map((spec) => nodeStatus(spec, input, leader, watchdog)),
    strays: [...input.strays],
    metrics: metricsNow(input, leader, watchdog),
  };
};

const COUNTS = new Set(['IncidentsOpened', 'Restarts', 'Failovers']);

const metricsNow = (input: StatusInput, leader: Leader | null, watchdog: WatchdogState | null): MetricValues => {
  const state = watchdog ?? emptyWatchdogState();
  const heartbeats = new Map(
    input.nodes.flatMap((spec) => {
      const hb = valueOf(input.heartbeats.get(spec.name)?.heartbeat);
      return hb === null ? [] : [[spec.name, hb] as const];
    }),
  );
  const values = watchdogMetricValues({
    before: state,
    after: state,
    leader,
    heartbeats,
    now: input.now,
    nodes: input.nodes,
    settings: input,
    done: [],
    gauges: true,
  });
  return {
    fleet: Object.fromEntries(Object.entries(values.fleet).filter(([name]) => !COUNTS.has(name))),
    nodes: values.nodes,
  };
};
