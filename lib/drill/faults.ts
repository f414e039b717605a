import type { Config } from '../core/config';
import type { Fault } from '../core/scenario';
import type { LocalCloud } from '../localcloud/cloud';
import type { LocalFleet } from '../localcloud/fleet';
import type { LocalScheduler } from '../localcloud/scheduler';
import type { Recorder } from './recorder';

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
}

/**
 * Injects faults the way they happen (DESIGN section 7): signals to processes, a node cut off
 * at the cloud's front door, a skewed clock, a duplicated or silenced watchdog. Each returns
 * how to undo it, for `for` and for the drain.
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
    if (target === 'standby') return [...this.t.config.nodes].sort((a, b) => a.priority - b.priority).map((n) => n.name).find((n) => n !== this.primary()) ?? this.primary();
    return target;
  }

  inject(fault: Fault, scheduleUndo: (afterScenarioSeconds: number, undo: () => void) => void): void {
    const { fleet, cloud, scheduler, recorder } = this.t;
    const node = this.resolve(fault.target);
    let detail: string = fault.kind;
    let undo: (() => void) | null = null;
    switch (fault.kind) {
      case 'stall-worker':
        fleet.signalWorker(node, 'SIGSTOP');
        detail = 'SIGSTOP to the worker';
        if (fault.until === 'never') {
          fleet.tell(node, { type: 'stall-workers', on: true });
          detail += ', and to every worker started after it';
        }
        undo = (): void => {
          fleet.tell(node, { type: 'stall-workers', on: false });
          fleet.signalWorker(node, 'SIGCONT');
        };
        break;
      case 'crash-worker':
        fleet.signalWorker(node, 'SIGKILL');
        detail = 'SIGKILL to the worker';
        break;
      case 'kill-node':
        fleet.killNode(node);
        detail = 'SIGKILL to the whole node';
        break;
      case 'kill-agent':
        fleet.tell(node, { type: 'kill-agent' });
        detail = 'SIGKILL to the agent, kept down';
        break;
      case 'partition-node':
        cloud.faults.set(node, { ...cloud.faults.get(node), partition: true });
        detail = 'cut off from the cloud';
        undo = (): void => {
          cloud.faults.delete(node);
        };
        break;
      case 'clock-skew':
        fleet.tell(node, { type: 'clock-offset', offsetMs: fault.offsetSeconds * 1000 });
        detail = `wall clock ${fault.offsetSeconds > 0 ? '+' : ''}${fault.offsetSeconds}s`;
        break;
      case 'duplicate-watchdog':
        scheduler.copies = fault.copies;
        detail = `every trigger runs ${fault.copies} watchdogs at once`;
        undo = (): void => {
          scheduler.copies = 1;
        };
        break;
      case 'watchdog-outage':
        scheduler.paused = true;
        detail = 'the watchdog does not run';
        undo = (): void => {
          scheduler.paused = false;
        };
        break;
      case 'slow-tasks':
        this.t.setWorkFactor(fault.factor);
        detail = `tasks enqueued from now on take ×${fault.factor}`;
        undo = (): void => this.t.setWorkFactor(1);
        break;
      case 's3-throttle':
        cloud.faults.set(node, { ...cloud.faults.get(node), throttleRate: fault.rate });
        detail = `${Math.round(fault.rate * 100)}% of its S3 requests answered 503 SlowDown`;
        undo = (): void => this.clearFault(node, 'throttleRate');
        break;
      case 's3-latency':
        cloud.faults.set(node, { ...cloud.faults.get(node), latencyMs: fault.ms / this.t.timeScale });
        detail = `+${fault.ms} ms on every request`;
        undo = (): void => this.clearFault(node, 'latencyMs');
        break;
      case 'poison-task':
        this.t.enqueuePoison();
        detail = 'a message no worker can process';
        break;
    }
    const scoped = fault.kind === 'duplicate-watchdog' || fault.kind === 'watchdog-outage' ? 'watchdog' : fault.kind === 'slow-tasks' || fault.kind === 'poison-task' ? 'queue' : node;
    recorder.faults.push({ at: recorder.t(), kind: fault.kind, node: scoped });
    recorder.note(scoped, 'fault', `${fault.kind}: ${detail}${fault.for === undefined ? '' : ` for ${fault.for}s`}`);
    if (undo !== null) {
      this.undo.push(undo);
      const u = undo;
      if (fault.for !== undefined) {
        scheduleUndo(fault.for, () => {
          u();
          recorder.note(scoped, 'fault-cleared', fault.kind);
        });
      }
    }
  }

  private clearFault(node: string, field: 'throttleRate' | 'latencyMs'): void {
    const current = { ...this.t.cloud.faults.get(node) };
    delete current[field];
    this.t.cloud.faults.set(node, current);
  }

  /** Clears every fault that can be cleared (the drain). */
  clearAll(): void {
    for (const u of this.undo.splice(0)) u();
  }
}
