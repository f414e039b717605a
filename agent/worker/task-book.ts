import { describeError } from '../../lib/core/errors';
import { mergeEntry, splitByAge, type TaskEntry } from '../../lib/core/sync/manifest';
import type { InFlightTask } from '../../lib/core/schemas';
import type { Logger } from '../../lib/log';
import { emptyRegistry, loadRegistry, registryPath, writeJsonAtomic, type Registry } from '../registry';

/**
 * The worker's side of the node-local registry (`registry.json`, read by the agent): what each
 * task did, the completions, the epoch the worker consumes under. Changes are folded in memory
 * and written whole, atomically, at the worker's next tick when something changed.
 */
export class TaskBook {
  private registry: Registry = emptyRegistry();
  private dirty = true;

  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
  ) {}

  /**
   * Loads the registry; completions older than `dropBeforeMs` were archived long ago and are
   * dropped. The previous process's in-flight tasks died with it. Returns why a damaged one was
   * copied aside, or null.
   */
  async load(now: number, dropBeforeMs: number): Promise<string | null> {
    const { registry, damaged } = await loadRegistry(this.dataDir, now);
    const { live } = splitByAge(registry.tasks, now, dropBeforeMs);
    this.registry = { ...registry, inFlight: [], tasks: live };
    this.dirty = true;
    return damaged;
  }

  get consumingEpoch(): number | null {
    return this.registry.consumingEpoch;
  }

  set consumingEpoch(epoch: number | null) {
    if (this.registry.consumingEpoch === epoch) return;
    this.registry.consumingEpoch = epoch;
    this.dirty = true;
  }

  /** Folds what just happened to a task into its entry (a join: it only moves forward). */
  record(taskId: string, change: Partial<TaskEntry>): void {
    const before = this.registry.tasks[taskId] ?? { status: 'queued', stages: 0, progress: 0, epoch: 0, done: null };
    this.registry.tasks = { ...this.registry.tasks, [taskId]: mergeEntry(before, { ...before, ...change }) };
    this.dirty = true;
  }

  /** A completion this worker won (it created done.json): the counters the stall rule reads. */
  completed(now: number, windowMs: number): void {
    this.registry.completedTotal++;
    this.registry.recentCompletions = [...this.registry.recentCompletions.filter((t) => t >= now - windowMs), now];
    this.dirty = true;
  }

  /** Something the written file shows changed (a task started or ended). */
  touch(): void {
    this.dirty = true;
  }

  /** Writes the registry with the tasks in flight now, if anything changed since the last write. */
  async flush(inFlight: readonly InFlightTask[]): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    this.registry.inFlight = inFlight.map((t) => ({ ...t }));
    await writeJsonAtomic(registryPath(this.dataDir), this.registry).catch((error: unknown) => {
      this.dirty = true;
      this.log.warn({ err: describeError(error) }, 'registry write failed');
    });
  }
}
