import { NODE_COMMANDS } from '../aws/run-command';
import { fleetEventSchema } from '../core/events';
import { checkpointSchema, heartbeatSchema, leaderSchema, STAGES } from '../core/schemas';
import type { Observations, TimelineEntry } from '../core/report';
import type { CloudObserver, LocalCloud } from '../localcloud/cloud';
import type { FleetEvent } from '../localcloud/fleet';

const DONE_RE = /tasks\/([^/]+)\/done\.json$/;
const CHECKPOINT_RE = /tasks\/([^/]+)\/checkpoint\.json$/;

/**
 * Watches the local cloud's wire and the fleet's processes and keeps what the report needs,
 * in scenario seconds. It trusts nothing the system says about itself beyond what crossed
 * the wire: completions are done.json creations, restarts are SSM commands that ran.
 */
export class Recorder {
  private startMs: number | null = null;
  private finished = false;
  readonly timeline: TimelineEntry[] = [];
  readonly faults: Observations['faults'] = [];
  readonly events: Observations['events'] = [];
  readonly supervisorRestarts: Observations['supervisorRestarts'] = [];
  readonly leaders: Observations['leaders'] = [];
  readonly receives: Observations['receives'] = [];
  readonly completions = new Map<string, number>();
  readonly dnsChanges: Observations['dnsChanges'] = [];
  readonly heartbeatsSeen = new Set<string>();
  onHeartbeat: ((fullKey: string) => void) | undefined;
  onEntry: ((entry: TimelineEntry) => void) | undefined;

  constructor(
    private readonly prefix: string,
    private readonly timeScale: number,
  ) {}

  /** Scenario time now; negative before the run started. */
  t(atMs = Date.now()): number {
    return this.startMs === null ? 0 : ((atMs - this.startMs) / 1000) * this.timeScale;
  }

  begin(): void {
    this.startMs = Date.now();
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
    s3Put: (fullKey, body) => {
      if (!fullKey.startsWith(this.prefix)) return;
      const key = fullKey.slice(this.prefix.length);
      const done = DONE_RE.exec(key);
      if (done?.[1] !== undefined) {
        this.completions.set(done[1], (this.completions.get(done[1]) ?? 0) + 1);
        return;
      }
      if (key.endsWith('/heartbeat.json')) {
        this.heartbeatsSeen.add(key);
        this.noteRole(body);
        this.onHeartbeat?.(fullKey);
        return;
      }
      if (key === 'leader.json') {
        const leader = leaderSchema.safeParse(JSON.parse(body.toString('utf8')));
        if (leader.success && !this.leaders.some((l) => l.epoch === leader.data.epoch)) {
          this.leaders.push({ t: this.t(), epoch: leader.data.epoch, primary: leader.data.primary });
          this.note(leader.data.primary, 'role', `primary, epoch ${leader.data.epoch}`);
        }
        return;
      }
      const checkpoint = CHECKPOINT_RE.exec(key);
      if (checkpoint?.[1] !== undefined) {
        this.noteCheckpoint(checkpoint[1], body);
        return;
      }
      if (key.startsWith('events/')) {
        const event = fleetEventSchema.safeParse(JSON.parse(body.toString('utf8')));
        if (event.success) {
          this.events.push({ t: this.t(), kind: event.data.kind, node: event.data.node, incidentId: event.data.incidentId });
          this.note(event.data.node, event.data.kind.toLowerCase(), event.data.summary);
        }
      }
    },
    snsPublish: (message) => {
      const event = fleetEventSchema.safeParse(JSON.parse(message));
      // Watchdog steps are noted from their event objects; a worker's poison alert only travels here.
      if (event.success && event.data.kind === 'POISON_TASK') this.note(event.data.node, 'poison_task', event.data.summary);
    },
    sqsReceive: (count, principal, epoch) => {
      if (this.started) this.receives.push({ t: this.t(), node: principal, count, epoch });
    },
  };

  /** Fleet process events: supervisor restarts after crashes, watchdog-driven restarts. */
  fleetEvent(event: FleetEvent): void {
    if (!this.started || this.finished) return;
    if (event.type === 'worker-exited') this.note(event.node, 'worker-exit', `${event.how}${event.planned ? ' (planned stop)' : ''}`);
    if (event.type === 'worker-started' && event.restarts > 0) {
      this.supervisorRestarts.push({ t: this.t(), node: event.node });
      this.note(event.node, 'worker-restart', `supervisor restarted the worker (pid ${event.pid})`);
    }
  }

  private readonly roles = new Map<string, string>();
  private readonly checkpoints = new Map<string, { node: string; stages: number }>();

  /** A checkpoint of an attempt that resumed: which stage it picked up at, and from whom. */
  private noteCheckpoint(taskId: string, body: Buffer): void {
    const cp = checkpointSchema.safeParse(JSON.parse(body.toString('utf8')));
    if (!cp.success) return;
    const before = this.checkpoints.get(taskId);
    this.checkpoints.set(taskId, { node: cp.data.node, stages: cp.data.stages });
    const from = cp.data.resumedFrom;
    if (from !== undefined && before !== undefined && this.started) {
      const stage = STAGES[from] ?? 'delivery';
      this.note(cp.data.node, 'resumed', `${taskId} at stage ${stage} (${from} done on ${before.node})`);
    }
  }

  /** A node's own word on its role, from its heartbeat: shows fencing and handovers. */
  private noteRole(body: Buffer): void {
    const hb = heartbeatSchema.safeParse(JSON.parse(body.toString('utf8')));
    if (!hb.success) return;
    const { node, role } = hb.data;
    const before = this.roles.get(node);
    this.roles.set(node, role);
    if (before !== undefined && before !== role && this.started) this.note(node, 'agent-role', `${before} → ${role} (epoch ${hb.data.samples.at(-1)?.epochSeen ?? '?'})`);
  }

  /** The origin record changed (the Route 53 fake applied a change). */
  dnsChange(values: string[], atMs: number): void {
    const value = values[0] ?? '';
    this.dnsChanges.push({ t: this.t(atMs), value });
    this.note('dns', 'record', `origin → ${value}`);
  }

  /** SSM restarts issued by the watchdog, from the fake's command log. */
  restarts(cloud: LocalCloud, nodeOf: (instanceId: string) => string): Observations['restarts'] {
    return cloud.fakes.commands
      .filter((c) => c.principal === 'watchdog' && c.command === NODE_COMMANDS.restartWorker)
      .map((c) => ({ t: this.t(c.requestedAt), node: nodeOf(c.instanceId), finishedAt: c.finishedAt === null ? null : this.t(c.finishedAt), ok: c.ok }));
  }
}
