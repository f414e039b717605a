import { appendFile } from 'node:fs/promises';
import { describeError } from '../../lib/core/errors';
import { mergeEntry, mergeTasks, splitByAge, type TaskEntry } from '../../lib/core/sync/manifest';
import type { InFlightTask, StoreName } from '../../lib/core/schemas';
import type { Logger } from '../../lib/log';
import { emptyRegistry, loadRegistry, registryPath, writeJsonAtomic, type Registry } from '../registry';
import { journalLine, journalPath, readGeneration, removeOlderGenerations, writeGeneration } from '../task-journal';

/** A new generation starts when the journal holds more lines than this, or twice the tasks known. */
const COMPACT_AFTER_LINES = 10_000;

/**
 * The worker's side of the node-local registry (`registry.json`, read by the agent: the
 * completions, the tasks in flight, the epoch the worker consumes under) and of the task journal
 * (agent/task-journal.ts: what each task did). A change costs what it touches: the task's entry
 * is folded in memory, and at the worker's next tick the tasks changed since the last one are
 * appended to the journal, each once; `registry.json`, small, is rewritten when it changed.
 */
export class TaskBook {
  private registry: Registry = emptyRegistry();
  private readonly tasks = new Map<string, TaskEntry>();
  /** Tasks changed since the last flush: each one journal line at the next. */
  private readonly pending = new Set<string>();
  private journalLines = 0;
  private dirty = true;

  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
    private readonly compactAfterLines = COMPACT_AFTER_LINES,
  ) {}

  /**
   * Loads the registry and the task journal, and starts a new generation from them; completions
   * older than `dropBeforeMs` were archived long ago and are dropped. The previous process's
   * in-flight tasks died with it. Returns why a damaged registry or snapshot was set aside, or null.
   */
  async load(now: number, dropBeforeMs: number): Promise<string | null> {
    const { registry, damaged } = await loadRegistry(this.dataDir, now);
    // The fleet's copy of every task is the S3 manifest: a damaged local snapshot loses nothing there.
    const { tasks, snapshotDamaged } = await readGeneration(this.dataDir, registry.tasksGeneration);
    const { live } = splitByAge(mergeTasks(registry.tasks ?? {}, tasks), now, dropBeforeMs);
    this.tasks.clear();
    for (const [id, entry] of Object.entries(live)) this.tasks.set(id, entry);
    this.registry = { ...registry, inFlight: [] };
    delete this.registry.tasks;
    this.pending.clear();
    await this.compact([]);
    return damaged ?? snapshotDamaged;
  }

  get consumingEpoch(): number | null {
    return this.registry.consumingEpoch;
  }

  set consumingEpoch(epoch: number | null) {
    if (this.registry.consumingEpoch === epoch) return;
    this.registry.consumingEpoch = epoch;
    this.dirty = true;
  }

  /** The epoch whose switchover drain is done (agent/switchover.ts reads it), or null. */
  set drained(epoch: number | null) {
    if (this.registry.drained === epoch) return;
    this.registry.drained = epoch;
    this.dirty = true;
  }

  get drained(): number | null {
    return this.registry.drained;
  }

  /** The stores the worker's parked tasks wait for, for the agent's samples. */
  set unreachable(stores: readonly StoreName[]) {
    if (this.registry.unreachable.join() === stores.join()) return;
    this.registry.unreachable = [...stores];
    this.dirty = true;
  }

  /** Folds what just happened to a task into its entry (a join: it only moves forward). */
  record(taskId: string, change: Partial<TaskEntry>): void {
    const before = this.tasks.get(taskId) ?? { status: 'queued', stages: 0, progress: 0, epoch: 0, done: null };
    this.tasks.set(taskId, mergeEntry(before, { ...before, ...change }));
    this.pending.add(taskId);
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

  /**
   * Appends the changed tasks to the journal, starts a new generation when the journal has
   * outgrown the snapshot, and writes the registry with the tasks in flight now if it changed.
   */
  async flush(inFlight: readonly InFlightTask[]): Promise<void> {
    if (this.pending.size > 0) {
      const ids = [...this.pending];
      this.pending.clear();
      // A task moved: the in-flight list (its progress, which the stall rule reads) is news too.
      this.dirty = true;
      // A leading newline ends whatever a failed or killed append left half-written, so these lines stay whole.
      const text = `\n${ids.map((id) => journalLine(id, this.tasks.get(id) as TaskEntry)).join('')}`;
      try {
        await appendFile(journalPath(this.dataDir, this.registry.tasksGeneration), text);
        this.journalLines += ids.length;
      } catch (error) {
        for (const id of ids) this.pending.add(id);
        this.log.warn({ err: describeError(error) }, 'task journal append failed; retried next tick');
      }
      if (this.journalLines > Math.max(this.compactAfterLines, 2 * this.tasks.size)) await this.compact(inFlight);
    }
    if (!this.dirty) return;
    // A failed write is logged and tried again at the next tick (still dirty).
    await this.writeRegistry(inFlight).catch(() => undefined);
  }

  private async writeRegistry(inFlight: readonly InFlightTask[]): Promise<void> {
    this.dirty = false;
    this.registry.inFlight = inFlight.map((t) => ({ ...t }));
    await writeJsonAtomic(registryPath(this.dataDir), this.registry).catch((error: unknown) => {
      this.dirty = true;
      this.log.warn({ err: describeError(error) }, 'registry write failed');
      throw error;
    });
  }

  /**
   * A new generation: its snapshot (every task known now) and an empty journal, then the registry
   * that names it, then the older files go. A failure leaves the old generation in use.
   */
  private async compact(inFlight: readonly InFlightTask[]): Promise<void> {
    const next = this.registry.tasksGeneration + 1;
    try {
      await writeGeneration(this.dataDir, next, Object.fromEntries(this.tasks));
      const before = this.registry.tasksGeneration;
      this.registry.tasksGeneration = next;
      await this.writeRegistry(inFlight).catch((error: unknown) => {
        this.registry.tasksGeneration = before;
        throw error;
      });
      this.journalLines = 0;
      await removeOlderGenerations(this.dataDir, next);
    } catch (error) {
      this.log.warn({ err: describeError(error) }, 'task snapshot not written; the journal goes on');
    }
  }
}
