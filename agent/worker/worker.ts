import type { Config } from '../../lib/core/config';
import { ConflictError, describeError } from '../../lib/core/errors';
import { KEYS } from '../../lib/core/keys';
import { doneSchema, taskMessageSchema, type Done, type InFlightTask } from '../../lib/core/schemas';
import { parseJsonText, parseWith } from '../../lib/core/validate';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { StateStore } from '../../lib/aws/state-store';
import type { Logger } from '../../lib/log';
import { bootId } from '../../lib/boot';
import { mono } from '../../lib/clock';
import { mayConsume } from '../../lib/core/lease';
import { mergeEntry, type TaskEntry } from '../../lib/core/manifest';
import { readProc } from '../proc';
import { emptyRegistry, readJsonFile, registryPath, registrySchema, roleFileSchema, rolePath, workerPidPath, writeJsonAtomic, type Registry, type RoleFile } from '../registry';
import { sleep } from '../../lib/sleep';

export interface WorkerDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  queue: TaskQueue;
  log: Logger;
  now: () => number;
}

const STAGES = ['transcode', 'titling', 'metadata', 'delivery'] as const;
const TICKS_PER_TASK = 50;

interface Running {
  task: InFlightTask;
  message: QueueMessage;
  abort: AbortController;
}


/**
 * The synthetic worker of the local fleet (`queen-fleet-worker`): consumes the task queue
 * while the agent says this node is primary, advances each task's progress counter, completes
 * it by creating `done.json` (If-None-Match: *), and deletes the message only after that.
 * A SIGSTOP freezes it exactly like a real hang: no progress, no completions.
 */
export class Worker {
  private registry: Registry = emptyRegistry();
  private dirty = true;
  private readonly running = new Map<string, Running>();
  private readonly stopping = new AbortController();
  private pollDone: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Aborts the receive under way when the lease lapses. */
  private receiving: AbortController | undefined;
  private watchTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: WorkerDeps) {}

  private get dataDir(): string {
    return this.deps.config.dataDir;
  }

  async start(): Promise<void> {
    const me = await readProc(process.pid);
    await writeJsonAtomic(workerPidPath(this.dataDir), { pid: process.pid, startTicks: me?.startTicks ?? 0 });
    const previous = await readJsonFile(registryPath(this.dataDir), registrySchema).catch(() => null);
    // Counters survive a restart; the previous process's in-flight tasks died with it.
    this.registry = previous === null ? emptyRegistry() : { ...previous, inFlight: [] };
    await this.flush();
    const flushMs = Math.max(20, Math.min(250, (this.deps.config.sampleIntervalSeconds * 1000) / 4));
    const flushLoop = (): void => {
      this.flushTimer = setTimeout(() => {
        void this.flush().finally(flushLoop);
      }, flushMs);
    };
    flushLoop();
    const watch = (): void => {
      this.watchTimer = setTimeout(() => {
        void this.checkFence().finally(watch);
      }, flushMs);
    };
    watch();
    this.pollDone = this.poll();
  }

  /** May this worker consume right now? The agent's word, checked against the clock. */
  private async allowed(): Promise<RoleFile | null> {
    const role = await this.role();
    return role.boot === bootId() && mayConsume(role, mono()) ? role : null;
  }

  /**
   * Self-fencing: once the lease lapses or another node holds it, stop the receive under way,
   * abandon running tasks and hand their messages back at once, so the next primary starts
   * with them and never shares them.
   */
  private async checkFence(): Promise<void> {
    if (this.registry.consumingEpoch === null || (await this.allowed()) !== null) return;
    this.deps.log.warn({ epoch: this.registry.consumingEpoch, tasks: this.running.size }, 'lease lapsed or lost: fencing');
    this.registry.consumingEpoch = null;
    this.dirty = true;
    this.receiving?.abort();
    const abandoned = [...this.running.values()];
    for (const r of abandoned) r.abort.abort();
    await Promise.allSettled(abandoned.map((r) => this.deps.queue.setVisibility(r.message.receiptHandle, 0)));
  }

  private async flush(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    this.registry.inFlight = [...this.running.values()].map((r) => ({ ...r.task }));
    await writeJsonAtomic(registryPath(this.dataDir), this.registry).catch((error: unknown) => {
      this.dirty = true;
      this.deps.log.warn({ err: describeError(error) }, 'registry write failed');
    });
  }

  private async role(): Promise<RoleFile> {
    return (await readJsonFile(rolePath(this.dataDir), roleFileSchema).catch(() => null)) ?? { role: 'standby', epoch: 0, validUntil: 0, boot: '' };
  }

  private async poll(): Promise<void> {
    const c = this.deps.config;
    const idleMs = (c.syncIntervalSeconds * 1000) / 4;
    while (!this.stopping.signal.aborted) {
      const role = await this.allowed();
      const free = c.concurrency - this.running.size;
      const epoch = role?.epoch ?? null;
      if (this.registry.consumingEpoch !== epoch) {
        this.registry.consumingEpoch = epoch;
        this.dirty = true;
      }
      if (role === null || free <= 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          void sleep(idleMs, this.stopping.signal).then(resolve);
        });
        continue;
      }
      this.receiving = new AbortController();
      const signal = AbortSignal.any([this.stopping.signal, this.receiving.signal]);
      try {
        const messages = await this.deps.queue.receive(free, c.receiveWaitSeconds, c.visibilityTimeoutSeconds, signal, role.epoch);
        // The lease may have lapsed during the long poll: nothing received then is kept.
        if ((await this.allowed())?.epoch !== role.epoch) {
          await Promise.allSettled(messages.map((m) => this.deps.queue.setVisibility(m.receiptHandle, 0)));
          continue;
        }
        for (const m of messages) this.begin(m, role.epoch);
      } catch (error) {
        if (this.stopping.signal.aborted) break;
        if (signal.aborted) continue;
        this.deps.log.warn({ err: describeError(error) }, 'receive failed; backing off');
        await sleep(idleMs, this.stopping.signal);
      }
    }
  }

  private begin(message: QueueMessage, epoch: number): void {
    let taskId: string;
    let workSeconds: number;
    try {
      const task = parseWith(taskMessageSchema, parseJsonText(message.body, `message ${message.id}`), `message ${message.id}`);
      taskId = task.taskId;
      workSeconds = task.workSeconds;
    } catch (error) {
      // Left on the queue: after its maximum receive count SQS moves it to the dead-letter queue.
      this.deps.log.error({ err: describeError(error), messageId: message.id }, 'malformed task message');
      return;
    }
    if (this.running.has(taskId)) return;
    const run: Running = { task: { taskId, progress: 0, stage: STAGES[0] }, message, abort: new AbortController() };
    this.running.set(taskId, run);
    this.record(taskId, { status: 'running', epoch });
    void this.execute(run, workSeconds, epoch)
      .catch((error: unknown) => this.deps.log.error({ err: describeError(error), taskId }, 'task failed; its message returns to the queue'))
      .finally(() => {
        this.running.delete(taskId);
        this.dirty = true;
        this.wake?.();
      });
  }

  private async execute(run: Running, workSeconds: number, epoch: number): Promise<void> {
    const { store, queue, config } = this.deps;
    const { taskId } = run.task;
    const already = await store.read(KEYS.done(taskId), doneSchema);
    if (already !== null) {
      this.record(taskId, { status: 'done', done: { node: already.value.node, epoch: already.value.epoch, at: already.value.finishedAt } });
      await queue.delete(run.message.receiptHandle);
      this.deps.log.info({ taskId }, 'already done elsewhere; message deleted');
      return;
    }
    const extendEveryMs = (config.visibilityTimeoutSeconds * 1000) / 2;
    let lastExtend = Date.now();
    const tickMs = (workSeconds * 1000) / TICKS_PER_TASK;
    for (let tick = 1; tick <= TICKS_PER_TASK; tick++) {
      await sleep(tickMs, run.abort.signal);
      if (run.abort.signal.aborted) return;
      run.task.progress = tick;
      const stage = Math.min(STAGES.length - 1, Math.floor((tick / TICKS_PER_TASK) * STAGES.length));
      run.task.stage = STAGES[stage];
      this.record(taskId, { progress: tick, stages: stage });
      if (Date.now() - lastExtend >= extendEveryMs) {
        lastExtend = Date.now();
        await queue.setVisibility(run.message.receiptHandle, config.visibilityTimeoutSeconds);
      }
    }
    const done: Done = { version: 1, taskId, node: config.nodeName, epoch, finishedAt: this.deps.now() };
    let first = true;
    try {
      await store.create(KEYS.done(taskId), done);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      first = false;
    }
    const winner = first ? done : ((await store.read(KEYS.done(taskId), doneSchema))?.value ?? done);
    this.record(taskId, { status: 'done', stages: STAGES.length, done: { node: winner.node, epoch: winner.epoch, at: winner.finishedAt } });
    // The message goes only after the completion is durable: a crash before this line repeats
    // the task, and the repeat finds done.json and stops there.
    await queue.delete(run.message.receiptHandle);
    if (first) {
      const now = this.deps.now();
      const since = now - config.completionWindowSeconds * 1000;
      this.registry.completedTotal++;
      this.registry.recentCompletions = [...this.registry.recentCompletions.filter((t) => t >= since), now];
      this.dirty = true;
    }
  }

  /** Folds what just happened to a task into its registry entry (a join: it only moves forward). */
  private record(taskId: string, change: Partial<TaskEntry>): void {
    const before = this.registry.tasks[taskId] ?? { status: 'queued', stages: 0, progress: 0, epoch: 0, done: null };
    this.registry.tasks = { ...this.registry.tasks, [taskId]: mergeEntry(before, { ...before, ...change }) };
    this.dirty = true;
  }

  /** Stops taking tasks, hands in-flight messages back to the queue, and flushes the registry. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopping.abort();
      clearTimeout(this.watchTimer);
      this.wake?.();
      const inFlight = [...this.running.values()];
      for (const r of inFlight) r.abort.abort();
      await Promise.allSettled(inFlight.map((r) => this.deps.queue.setVisibility(r.message.receiptHandle, 0)));
      await this.pollDone;
      clearTimeout(this.flushTimer);
      this.running.clear();
      this.registry.consumingEpoch = null;
      this.dirty = true;
      await this.flush();
    })();
    return this.closing;
  }
}
