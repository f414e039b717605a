import { NODE_COMMANDS } from '../../aws/run-command';
import { fleetEventSchema } from '../../core/events';
import {
  eventOfKey,
  KEYS,
  nodeOfBeatKey,
  nodeOfHeartbeatKey,
  taskOfCheckpointKey,
  taskOfDoneKey,
  underPrefix,
} from '../../core/keys';
import { checkpointSchema, doneSchema, heartbeatSchema, leaderSchema, type Heartbeat } from '../../core/schemas';
import { SEED_STAGES } from '../../core/pipeline';
import { workerFault } from '../../core/fleet/readiness';
import { advanceCounter, emptyCounter, type StallCounter } from '../../core/fleet/stall';
import type { MetricSeries, Observations, TimelineEntry } from '../../core/drill/report';
import type { TaskArtifact } from '../../core/drill/report-types';
import type { DrillEvent } from '../../core/drill/trigger';
import { readEmf } from '../../core/metrics/emf';
import type { CloudObserver, LocalCloud } from '../localcloud/cloud';
import type { MachineEvent } from '../localcloud/fleet';

/** Parses a stored body; null when it is not JSON (a corrupt object is the system's business, not the recorder's). */
const json = (body: Buffer): unknown => {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
};

/**
 * Watches the local cloud's wire and the fleet's processes and keeps what the report needs,
 * in scenario seconds. It trusts nothing the system says about itself beyond what crossed
 * the wire: completions are done.json creations, restarts are SSM commands that ran, the
 * epoch of every receive and task-state write is what its request carried.
 */
export class Recorder {
  private startMs: number | null = null;
  private finished = false;
  readonly timeline: TimelineEntry[] = [];
  readonly faults: Observations['faults'] = [];
  readonly events: Observations['events'] = [];
  readonly supervisorRestarts: Observations['supervisorRestarts'] = [];
  readonly workerStarts: Observations['workerStarts'] = [];
  readonly leaders: Observations['leaders'] = [];
  readonly receives: Observations['receives'] = [];
  readonly extensions: Observations['extensions'] = [];
  readonly depths: Observations['depths'] = [];
  readonly writes: Observations['writes'] = [];
  readonly windows: Observations['windows'] = [];
  readonly readiness: Observations['readiness'] = [];
  private readonly ready = new Map<string, boolean>();
  readonly completions = new Map<string, number>();
  /** Messages handed back at once by each node (tasks given up on and retried, or fenced). */
  givenBack = 0;
  readonly dnsChanges: Observations['dnsChanges'] = [];
  readonly heartbeatsSeen = new Set<string>();
  private readonly counters = new Map<string, StallCounter>();
  private readonly lastBeat = new Map<string, number>();
  /** The longest time between two heartbeats of each node (scenario s): a node's hiccups show here. */
  readonly heartbeatGaps: Record<string, number> = {};
  /** Each task's artifacts, as its newest checkpoint names them. */
  readonly artifacts: Record<string, TaskArtifact[]> = {};
  private readonly series = new Map<string, MetricSeries>();
  onEntry: ((entry: TimelineEntry) => void) | undefined;
  /** Events a fault may wait for (lib/core/drill/trigger.ts), as they cross the wire during the run. */
  onEvent: ((event: DrillEvent) => void) | undefined;

  constructor(
    private readonly prefix: string,
    private readonly timeScale: number,
    /** Consecutive failing samples that make a stall: the recorder judges windows the same way. */
    private readonly stallSamples: number,
    /** The sample interval, wall ms: a standby's self-test counts for PROOF_INTERVALS of them. */
    private readonly sampleMs: number,
  ) {}

  /** Scenario time now; negative before the run started. */
  t(atMs = Date.now()): number {
    return this.startMs === null ? 0 : ((atMs - this.startMs) / 1000) * this.timeScale;
  }

  begin(): void {
    this.startMs = Date.now();
  }

  /** The queues' depths now (every sample interval, drain included). */
  depth(backlog: number, intake: number): void {
    if (this.started && !this.finished) this.depths.push({ t: this.t(), backlog, intake });
  }

  /** A line the watchdog wrote to its metrics' output (Embedded Metric Format); durations in scenario seconds. */
  metric(line: string): void {
    if (!this.started || this.finished) return;
    const t = this.t();
    for (const v of readEmf(line) ?? []) {
      const id = `${v.name}\u0000${v.node ?? ''}`;
      const series = this.series.get(id) ?? { name: v.name, node: v.node, unit: v.unit, points: [] };
      series.points.push([t, v.unit === 'Seconds' ? Math.round(v.value * this.timeScale * 10) / 10 : v.value]);
      this.series.set(id, series);
    }
  }

  /** Every metric series captured, by name then node. */
  get metrics(): MetricSeries[] {
    return [...this.series.values()].sort(
      (a, b) => a.name.localeCompare(b.name) || (a.node ?? '').localeCompare(b.node ?? ''),
    );
  }

  /** The run is over: teardown of the fleet is not part of the timeline. */
  finish(): void {
    this.finished = true;
  }

  get started(): boolean {
    return this.startMs !== null;
  }

  note(node: string, event: string, detail: string, t = this.t()): void {
    const entry = { t, node, event, detail };
    this.timeline.push(entry);
    this.onEntry?.(entry);
  }

  readonly observer: CloudObserver = {
    s3Put: (fullKey, body, principal) => {
      const key = underPrefix(this.prefix, fullKey);
      if (key === null) return;
      const done = taskOfDoneKey(key);
      if (done !== null) {
        this.completions.set(done, (this.completions.get(done) ?? 0) + 1);
        const d = doneSchema.safeParse(json(body));
        if (d.success && this.started)
          this.writes.push({ t: this.t(), node: principal, kind: 'done', taskId: done, epoch: d.data.epoch });
        return;
      }
      if (nodeOfHeartbeatKey(key) !== null) {
        this.heartbeatsSeen.add(key);
        this.noteHeartbeat(body);
        return;
      }
      const beating = nodeOfBeatKey(key);
      if (beating !== null) {
        this.noteAlive(beating);
        return;
      }
      if (key === KEYS.leader) {
        const leader = leaderSchema.safeParse(json(body));
        // Only the holder renews: a renewal is the primary's word that it is alive.
        if (leader.success && leader.data.renewals > 0) this.noteAlive(leader.data.primary);
        if (leader.success && !this.leaders.some((l) => l.epoch === leader.data.epoch)) {
          this.leaders.push({ t: this.t(), epoch: leader.data.epoch, primary: leader.data.primary });
          this.note(
            leader.data.primary,
            'role',
            `primary, epoch ${leader.data.epoch} (${leader.data.handover}, by ${leader.data.changedBy})` +
              (leader.data.reason.startsWith('switchover ') ? `: ${leader.data.reason}` : ''),
          );
        }
        return;
      }
      const checkpoint = taskOfCheckpointKey(key);
      if (checkpoint !== null) {
        this.noteCheckpoint(checkpoint, body, principal);
        return;
      }
      if (eventOfKey(key) !== null) {
        const event = fleetEventSchema.safeParse(json(body));
        if (event.success) {
          this.events.push({
            t: this.t(),
            kind: event.data.kind,
            node: event.data.node,
            incidentId: event.data.incidentId,
          });
          const summary = event.data.paused === true ? `PAUSED: ${event.data.summary}` : event.data.summary;
          this.note(event.data.node, event.data.kind.toLowerCase(), summary);
        }
      }
    },
    // The lease lives in the control table (lib/aws/state-store.ts, inTable): seen the same way.
    tablePut: (_table, key, body, principal) => {
      if (body !== null) this.observer.s3Put?.(`${this.prefix}${key}`, Buffer.from(body), principal);
    },
    snsPublish: (message) => {
      const event = fleetEventSchema.safeParse(json(Buffer.from(message)));
      // Watchdog steps are noted from their event objects; a node's own alerts only travel here.
      if (!event.success) return;
      const { kind, node, summary, incidentId } = event.data;
      const fromNode =
        kind === 'POISON_TASK' ||
        kind === 'MANIFEST_DAMAGED' ||
        kind === 'OUTAGE' ||
        (kind === 'RECOVERED' && incidentId.startsWith('outage-'));
      if (fromNode) this.note(node, kind.toLowerCase(), summary);
    },
    sqsReceive: (count, principal, epoch, taskIds) => {
      if (this.started) this.receives.push({ t: this.t(), node: principal, count, epoch, taskIds });
    },
    sqsExtend: (principal, taskId) => {
      if (this.started && !this.finished) this.extensions.push({ t: this.t(), node: principal, taskId });
    },
    sqsGiveBack: (principal) => {
      if (!this.started || this.finished) return;
      this.givenBack++;
      this.note(principal, 'give-back', 'a message handed back to the queue at once (its task is retried)');
    },
  };

  /** Fleet process and machine events: supervisor restarts after crashes, power states. */
  machineEvent(event: MachineEvent): void {
    if (!this.started || this.finished) return;
    if (event.type === 'machine') this.note(event.node, 'lightsail', event.state);
    if (event.type === 'worker-exited')
      this.note(event.node, 'worker-exit', `${event.how}${event.planned ? ' (planned stop)' : ''}`);
    if (event.type === 'worker-started') this.workerStarts.push({ t: this.t(), node: event.node });
    if (event.type === 'worker-started' && event.restarts > 0) {
      this.supervisorRestarts.push({ t: this.t(), node: event.node });
      this.note(event.node, 'worker-restart', `supervisor restarted the worker (pid ${event.pid})`);
    }
  }

  private readonly roles = new Map<string, string>();
  private readonly checkpoints = new Map<string, { node: string; stages: number }>();

  /** A checkpoint: its epoch for the fencing check, and for an attempt that resumed, where it picked up. */
  private noteCheckpoint(taskId: string, body: Buffer, principal: string): void {
    const cp = checkpointSchema.safeParse(json(body));
    if (!cp.success) return;
    if (this.started)
      this.writes.push({ t: this.t(), node: principal, kind: 'checkpoint', taskId, epoch: cp.data.epoch });
    const before = this.checkpoints.get(taskId);
    this.checkpoints.set(taskId, { node: cp.data.node, stages: cp.data.stages });
    const files = Object.entries(cp.data.artifacts ?? {}).flatMap(([stage, all]) =>
      all.map(({ path, size, sha256 }) => ({ stage, path, size, sha256 })),
    );
    if (files.length > 0) this.artifacts[taskId] = files;
    const from = cp.data.resumedFrom;
    if (from !== undefined && before !== undefined && this.started) {
      const stage = cp.data.stage ?? SEED_STAGES[from] ?? '?';
      // What the task had checkpointed, beside where it resumed: a resume that skipped or redid a stage shows.
      const where = `${before.stages} stage(s) done on ${before.node}`;
      this.note(cp.data.node, 'resumed', `${taskId} at stage ${stage} (${where})`);
    } else if (
      from === undefined &&
      before !== undefined &&
      before.node !== cp.data.node &&
      before.stages > 0 &&
      before.stages < (cp.data.of ?? SEED_STAGES.length) &&
      this.started
    ) {
      // Another node took the task up and started it over although stages were checkpointed: progress thrown away.
      this.note(cp.data.node, 'restarted', `${taskId} from the first stage (${before.stages} done on ${before.node})`);
    }
    if (this.started && !this.finished) this.onEvent?.({ kind: 'checkpoint', node: principal, stages: cp.data.stages });
  }

  /**
   * Whether the node is a ready standby by its own heartbeat, judged as the watchdog does: not
   * claiming the role, a worker that passed its self-test lately, and synced to the newest
   * epoch written. Kept as changes.
   */
  private noteReadiness(hb: Heartbeat): void {
    const last = hb.samples.at(-1);
    const epoch = this.leaders.at(-1)?.epoch;
    const ready =
      last !== undefined &&
      hb.role !== 'primary' &&
      workerFault(last, this.sampleMs) === null &&
      last.epochSeen === epoch;
    if (this.ready.get(hb.node) === ready) return;
    this.ready.set(hb.node, ready);
    this.readiness.push({ t: this.t(), node: hb.node, ready });
  }

  /**
   * A sign of a node's life: its heartbeat, its beat item, or a lease renewal that carried its
   * sample. The gaps between them are where the node went quiet (`heartbeatGaps`).
   */
  private noteAlive(node: string): void {
    if (!this.started || this.finished) return;
    const now = this.t();
    const last = this.lastBeat.get(node);
    if (last !== undefined)
      this.heartbeatGaps[node] = Math.round(Math.max(this.heartbeatGaps[node] ?? 0, now - last) * 10) / 10;
    this.lastBeat.set(node, now);
  }

  /**
   * A node's heartbeat: its own word on its role (shows fencing and handovers), and its samples
   * judged by the stall rule, so the report knows when a primary's window of failing samples
   * closed (the moment a verdict is due).
   */
  private noteHeartbeat(body: Buffer): void {
    const hb = heartbeatSchema.safeParse(json(body));
    if (!hb.success) return;
    const { node, role } = hb.data;
    this.noteAlive(node);
    const before = this.roles.get(node);
    this.roles.set(node, role);
    if (before !== undefined && before !== role && this.started)
      this.note(node, 'agent-role', `${before} → ${role} (epoch ${hb.data.samples.at(-1)?.epochSeen ?? '?'})`);
    this.noteReadiness(hb.data);
    const counter = this.counters.get(node) ?? emptyCounter();
    const next =
      role === 'primary'
        ? advanceCounter(counter, hb.data.boot, hb.data.samples)
        : { ...emptyCounter(), boot: hb.data.boot };
    this.counters.set(node, next);
    if (this.started && counter.failing < this.stallSamples && next.failing >= this.stallSamples)
      this.windows.push({ t: this.t(), node });
  }

  /** The origin record changed (the Route 53 fake applied a change); it is INSYNC `insyncAfterMs` later. */
  dnsChange(values: string[], atMs: number, insyncAfterMs: number): void {
    const value = values[0] ?? '';
    this.dnsChanges.push({ t: this.t(atMs), value, insyncAt: this.t(atMs + insyncAfterMs) });
    this.note('dns', 'record', `origin → ${value}`);
  }

  /** SSM restarts issued by the watchdog, from the fake's command log. */
  restarts(cloud: LocalCloud, nodeOf: (instanceId: string) => string): Observations['restarts'] {
    return cloud.fakes.commands
      .filter((c) => c.principal === 'watchdog' && c.command === NODE_COMMANDS.restartWorker)
      .map((c) => ({
        t: this.t(c.requestedAt),
        node: nodeOf(c.instanceId),
        finishedAt: c.finishedAt === null ? null : this.t(c.finishedAt),
        ok: c.ok,
        incidentId: /^queen-fleet (\S+)$/.exec(c.comment)?.[1] ?? null,
      }));
  }
}
