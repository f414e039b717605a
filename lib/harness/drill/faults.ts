import { readFile } from 'node:fs/promises';
import { heldPath } from '../../../agent/worker/held';
import type { Config } from '../../core/config';
import type { Observations } from '../../core/drill/report';
import { isFleetWide, LOSABLE_KEYS, type Fault } from '../../core/drill/scenario';
import { KEYS } from '../../core/keys';
import type { CallerFault, LocalCloud } from '../localcloud/cloud';
import type { LocalFleet } from '../localcloud/fleet';
import type { LocalScheduler } from '../localcloud/scheduler';
import type { Recorder } from './recorder';
import type { WatchdogCrash } from './watchdog-crash';

/** Wall ms after a signal before the faulted worker's held.json is read: the signal has landed by then. */
const RECORDED_AFTER_MS = 100;

/** What the injector acts on. */
export interface FaultTargets {
  cloud: LocalCloud;
  fleet: LocalFleet;
  scheduler: LocalScheduler;
  recorder: Recorder;
  config: Config;
  timeScale: number;
  /** Multiplies the work of tasks enqueued from now on (slow-tasks). */
  setWorkFactor: (factor: number) => void;
  /** Puts a message on the task queue no worker can process (poison-task). */
  enqueuePoison: () => void;
  /** Writes `text` over the object at `key` (below the state prefix), as the harness: never faulted itself. */
  writeRaw: (key: string, text: string) => Promise<void>;
  /** Records `fleet switchover --to <node>` as an operator would, without waiting; resolves to what it did. */
  switchover: (to: string) => Promise<string>;
  /** The drill's watchdog dies mid-run while this is active (watchdog-crash). */
  watchdogCrash: Pick<WatchdogCrash, 'active'>;
}

/** What a corrupt-object fault writes: a record cut off mid-write, then bytes that are not UTF-8. */
const GARBAGE = '{"version":1,"primary":"node-1","epo\u0000\ufffd\u00ff not json';

/** The object a corrupt-object fault damages. */
const corruptKey = (fault: Extract<Fault, { kind: 'corrupt-object' }>, node: string): string => {
  switch (fault.key) {
    case 'leader':
      return KEYS.leader;
    case 'watchdog-state':
      return KEYS.watchdogState;
    case 'heartbeat':
      return KEYS.heartbeat(node);
    case 'manifest-bucket':
      return KEYS.manifestShard(fault.bucket);
  }
};

/** What a fault acts on, for the timeline: a node, or the part of the fleet a fleet-wide fault strikes. */
const scopeOf = (fault: Fault, node: string): string => {
  if (fault.kind === 'corrupt-object') return fault.key === 'heartbeat' ? node : 'bucket';
  if (!isFleetWide(fault)) return node;
  if (fault.kind === 'duplicate-watchdog' || fault.kind === 'watchdog-outage') return 'watchdog';
  if (fault.kind === 'watchdog-crash') return 'watchdog';
  return fault.kind.startsWith('s3') || fault.kind === 'dynamodb-outage' || fault.kind === 'notification-lag'
    ? 'cloud'
    : 'queue';
};

/** How often (wall ms) a hang-stage that found no stage running looks again, and for how long (scenario s). */
const HANG_RETRY_MS = 10;
const HANG_WAIT_SECONDS = 60;

/**
 * Calls `strike` every `everyMs` until it hits something (returns more than 0) or `withinMs`
 * has passed, then tells `done` what the last strike hit. Returns a cancel that stops it quietly.
 */
export const retryUntilHit = (
  strike: () => number,
  everyMs: number,
  withinMs: number,
  done: (hit: number) => void,
): (() => void) => {
  const until = Date.now() + withinMs;
  const timer = setInterval(() => {
    const hit = strike();
    if (hit === 0 && Date.now() < until) return;
    clearInterval(timer);
    done(hit);
  }, everyMs);
  return () => clearInterval(timer);
};

/** What injecting one fault did: words for the timeline, and how to undo it (null: it cannot be). */
interface Injected {
  detail: string;
  undo: (() => void) | null;
}

/**
 * Injects faults the way they happen to real fleets: a VM that crashes,
 * stops, freezes or reboots, signals to processes, stages that hang, a node cut off at the
 * cloud's front door, S3 down or slow for everyone, late notifications, a skewed clock, a
 * duplicated or silenced watchdog. Each says how to undo it, for `for` and for the drain.
 */
export class FaultInjector {
  private readonly undo: (() => void)[] = [];

  constructor(private readonly t: FaultTargets) {}

  private primary(): string {
    return this.t.recorder.leaders.at(-1)?.primary ?? 'node-1';
  }

  /** `primary`, `standby` (the best-priority other node) or a node name, resolved now. */
  resolve(target: string): string {
    if (target === 'primary') return this.primary();
    if (target === 'standby')
      return (
        [...this.t.config.nodes]
          .sort((a, b) => a.priority - b.priority)
          .map((n) => n.name)
          .find((n) => n !== this.primary()) ?? this.primary()
      );
    return target;
  }

  private apply(fault: Fault, node: string): Injected {
    const { fleet, cloud, scheduler } = this.t;
    const wall = (scenarioSeconds: number): number => (scenarioSeconds * 1000) / this.t.timeScale;
    switch (fault.kind) {
      case 'stall-worker': {
        fleet.signalWorker(node, 'SIGSTOP');
        if (fault.until === 'never') fleet.tell(node, { type: 'stall-workers', on: true });
        const undo = (): void => {
          fleet.tell(node, { type: 'stall-workers', on: false });
          fleet.signalWorker(node, 'SIGCONT');
        };
        return {
          detail: `SIGSTOP to the worker${fault.until === 'never' ? ', and to every worker started after it' : ''}`,
          undo,
        };
      }
      case 'crash-worker':
        fleet.signalWorker(node, 'SIGKILL');
        return { detail: 'SIGKILL to the worker', undo: null };
      case 'kill-node':
        fleet.killNode(node);
        return {
          detail: 'the VM crashed: every process killed; Lightsail still says running, SSM pings stop',
          undo: null,
        };
      case 'stop-node':
        fleet.stopNode(node);
        return {
          detail: 'StopInstance: services get SIGTERM, Lightsail goes stopping, then stopped',
          undo: () => fleet.startInstance(node),
        };
      case 'freeze-node':
        fleet.freezeNode(node);
        return {
          detail: 'every process of the node stopped (a hung kernel); Lightsail still says running',
          undo: () => fleet.thawNode(node),
        };
      case 'reboot-node':
        fleet.rebootNode(node, wall(fault.for));
        return { detail: `rebooting: every process killed, the services start again after ${fault.for}s`, undo: null };
      case 'kill-agent':
        fleet.tell(node, { type: 'kill-agent' });
        return { detail: 'SIGKILL to the agent, kept down', undo: () => fleet.tell(node, { type: 'start-agent' }) };
      case 'partition-node':
        cloud.faults.set(node, { ...cloud.faults.get(node), partition: true });
        return { detail: 'cut off from the cloud', undo: () => this.clearFault(node, 'partition') };
      case 'hang-stage': {
        const hung = fleet.hangStages(node);
        if (hung > 0)
          return { detail: `${hung} running stage process(es) stopped: alive, no CPU, no progress`, undo: null };
        // Between two stages (a checkpoint being written) nothing runs: the next stage to start hangs
        // instead, so the drill never passes on a fault that struck nothing (CI run 20).
        const cancel = retryUntilHit(
          () => fleet.hangStages(node),
          HANG_RETRY_MS,
          wall(HANG_WAIT_SECONDS),
          (hit) =>
            this.t.recorder.note(
              node,
              'fault-struck',
              hit > 0
                ? `hang-stage: ${hit} stage process(es) stopped as they started`
                : `hang-stage: no stage started within ${HANG_WAIT_SECONDS}s, nothing hung`,
            ),
        );
        return {
          detail: 'no stage process running at this instant (between stages): the next to start is stopped',
          undo: cancel,
        };
      }
      case 'clock-skew':
        fleet.tell(node, { type: 'clock-offset', offsetMs: fault.offsetSeconds * 1000 });
        return {
          detail: `wall clock ${fault.offsetSeconds > 0 ? '+' : ''}${fault.offsetSeconds}s`,
          undo: () => fleet.tell(node, { type: 'clock-offset', offsetMs: 0 }),
        };
      case 'duplicate-watchdog':
        scheduler.copies = fault.copies;
        return { detail: `every trigger runs ${fault.copies} watchdogs at once`, undo: () => (scheduler.copies = 1) };
      case 'watchdog-outage':
        scheduler.paused = true;
        return { detail: 'the watchdog does not run', undo: () => (scheduler.paused = false) };
      case 'slow-tasks':
        this.t.setWorkFactor(fault.factor);
        return { detail: `tasks enqueued from now on take ×${fault.factor}`, undo: () => this.t.setWorkFactor(1) };
      case 's3-throttle':
        cloud.faults.set(node, { ...cloud.faults.get(node), throttleRate: fault.rate });
        return {
          detail: `${Math.round(fault.rate * 100)}% of its S3 requests answered 503 SlowDown`,
          undo: () => this.clearFault(node, 'throttleRate'),
        };
      case 's3-latency':
        cloud.faults.set(node, { ...cloud.faults.get(node), latencyMs: fault.ms / this.t.timeScale });
        return { detail: `+${fault.ms} ms on every request`, undo: () => this.clearFault(node, 'latencyMs') };
      case 's3-outage':
        if (fault.target !== undefined) {
          cloud.faults.set(node, { ...cloud.faults.get(node), s3Outage: true });
          const detail = 'every S3 request of this node fails (503); its DynamoDB and SQS work';
          return { detail, undo: () => this.clearFault(node, 's3Outage') };
        }
        cloud.outage.s3 = true;
        return {
          detail: 'every S3 request of every node and of the watchdog fails (503)',
          undo: () => (cloud.outage.s3 = false),
        };
      case 'blackhole-node':
        cloud.blackholes.start(node);
        return {
          detail: 'its packets vanish: no answer, no reset; what it sends is applied when this clears',
          undo: () => cloud.blackholes.end(node),
        };
      case 'watchdog-crash': {
        const crash = this.t.watchdogCrash;
        crash.active = true;
        const detail = 'a run that sends a claimed restart dies after the claim, before the send';
        return { detail, undo: () => (crash.active = false) };
      }
      case 'dynamodb-outage':
        cloud.outage.dynamodb = true;
        return {
          detail:
            'every DynamoDB request of every node and of the watchdog fails (503): ' +
            'the lease can be neither read nor renewed',
          undo: () => (cloud.outage.dynamodb = false),
        };
      case 'notification-lag':
        cloud.notifications.lagMs = wall(fault.seconds);
        return {
          detail: `S3 event notifications reach the watchdog ${fault.seconds}s late`,
          undo: () => (cloud.notifications.lagMs = 0),
        };
      case 'switchover': {
        this.t.switchover(node).then(
          (done) => this.t.recorder.note(this.primary(), 'switchover', done),
          (error: unknown) => this.t.recorder.note('drill', 'error', `switchover: ${String(error)}`),
        );
        return { detail: `fleet switchover --to ${node} --yes`, undo: null };
      }
      case 'poison-task':
        this.t.enqueuePoison();
        return { detail: 'a message no worker can process', undo: null };
      case 'lost-response': {
        const keys = fault.key === undefined ? /./ : LOSABLE_KEYS[fault.key];
        cloud.faults.set(node, { ...cloud.faults.get(node), loseResponses: keys });
        return {
          detail:
            `every PUT it sends${fault.key === undefined ? '' : ` to ${fault.key}`} ` +
            'is applied and its response lost',
          undo: () => this.clearFault(node, 'loseResponses'),
        };
      }
      case 'corrupt-object': {
        const key = corruptKey(fault, node);
        const written = this.t.writeRaw(key, GARBAGE);
        written.catch((error: unknown) =>
          this.t.recorder.note('drill', 'error', `corrupt-object: ${key} not written: ${String(error)}`),
        );
        return { detail: `garbage written over ${key}`, undo: null };
      }
    }
  }

  /** `cause`: what set it off, for a fault that waited for an event (`at: { after: … }`). */
  inject(fault: Fault, scheduleUndo: (afterScenarioSeconds: number, undo: () => void) => void, cause?: string): void {
    const node = this.resolve(fault.target ?? 'primary');
    // A switchover's incident is the primary's, whose role it moves away.
    const scoped = fault.kind === 'switchover' ? this.primary() : scopeOf(fault, node);
    const { detail, undo } = this.apply(fault, node);
    const { recorder } = this.t;
    const entry: Observations['faults'][number] = { at: recorder.t(), kind: fault.kind, node: scoped };
    recorder.faults.push(entry);
    this.noteRecorded(fault.kind, node, entry);
    // A reboot's `for` is its downtime, which the fleet times itself.
    const timed = fault.for !== undefined && fault.kind !== 'reboot-node';
    const after = cause === undefined ? '' : `, after ${cause}`;
    recorder.note(scoped, 'fault', `${fault.kind}: ${detail}${timed ? ` for ${fault.for}s` : ''}${after}`);
    if (undo === null) return;
    this.undo.push(undo);
    if (timed && fault.for !== undefined) {
      scheduleUndo(fault.for, () => {
        if (!this.undo.includes(undo)) return;
        this.undo.splice(this.undo.indexOf(undo), 1);
        undo();
        recorder.note(scoped, 'fault-cleared', fault.kind);
      });
    }
  }

  /** Which messages the faulted node held when the fault struck: its held.json once the signal landed. */
  private noteRecorded(kind: Fault['kind'], node: string, entry: Observations['faults'][number]): void {
    if (!['stall-worker', 'crash-worker', 'reboot-node', 'kill-node', 'freeze-node'].includes(kind)) return;
    setTimeout(() => {
      readFile(heldPath(this.t.fleet.dataDir(node)), 'utf8').then(
        (text) => {
          entry.recorded = Object.keys((JSON.parse(text) as { messages?: Record<string, unknown> }).messages ?? {});
        },
        () => {
          entry.recorded = [];
        },
      );
    }, RECORDED_AFTER_MS);
  }

  private clearFault(node: string, field: keyof CallerFault): void {
    const current = { ...this.t.cloud.faults.get(node) };
    delete current[field];
    this.t.cloud.faults.set(node, current);
  }

  /** Clears every fault that can be cleared (the drain). */
  clearAll(): void {
    for (const u of this.undo.splice(0)) u();
  }
}
