import type { Config } from '../../lib/core/config';
import { describeError, FencedError, isRetryable } from '../../lib/core/errors';
import { pipelineOf } from '../../lib/core/pipeline';
import { taskMessageSchema, type TaskMessage } from '../../lib/core/schemas';
import { parseJsonText, parseWith } from '../../lib/core/validate';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { Logger } from '../../lib/log';
import { mono } from '../runtime/clock';
import type { Custody } from './custody';
import type { LeaseView } from './lease-view';
import { taskEvents, type Running } from './running';
import type { TaskBook } from './task-book';
import { StageTempFailError } from './stages';
import type { TaskRunner } from './task-runner';
import { Workspace } from './workspace';

export interface InHandDeps {
  config: Config & { nodeName: string };
  queue: Pick<TaskQueue, 'setVisibility'>;
  log: Logger;
  now: () => number;
  runner: TaskRunner;
  book: TaskBook;
  custody: Custody;
  lease: LeaseView;
  /** Aborted on SIGTERM or a switchover's drain: tasks stop after checkpointing their current stage. */
  draining: () => AbortSignal;
  /** Aborted once the worker stops. */
  stopping: AbortSignal;
  /** True when the worker stops under a valid lease: its messages stay held for whoever carries on. */
  handOn: () => boolean;
  /** Told whenever an attempt ends (the poll loop may have room again). */
  settled: () => void;
}

/**
 * The tasks a worker has in hand, each with the message it came in: their attempts, the ones
 * waiting out an outage, and the visibility of their messages, extended while the lease lasts.
 */
export class InHand {
  private readonly running = new Map<string, Running>();
  /** Each attempt under way, for draining on SIGTERM. */
  readonly attempts = new Set<Promise<void>>();

  constructor(private readonly deps: InHandDeps) {}

  get size(): number {
    return this.running.size;
  }

  all(): Running[] {
    return [...this.running.values()];
  }

  ids(): ReadonlySet<string> {
    return new Set(this.running.keys());
  }

  /** True while some task waits out an outage: nothing more is received then. */
  get waiting(): boolean {
    return this.all().some((r) => r.parked !== null);
  }

  /** Takes a received message in hand and starts its task. */
  begin(message: QueueMessage, epoch: number, receivedAt: number): void {
    const { custody, log, book } = this.deps;
    let body: TaskMessage;
    try {
      body = parseWith(
        taskMessageSchema,
        parseJsonText(message.body, `message ${message.id}`),
        `message ${message.id}`,
      );
    } catch (error) {
      log.error({ err: describeError(error), messageId: message.id }, 'malformed task message');
      void custody.fail(message, `malformed: ${describeError(error)}`, epoch, receivedAt);
      return;
    }
    const { taskId } = body;
    const already = this.running.get(taskId);
    if (already !== undefined) {
      // SQS handed the same message out again (its visibility ran out, or a delete did not take):
      // the running task adopts the new receipt, the only one SQS still honours.
      already.message.receiptHandle = message.receiptHandle;
      already.receivedAt = receivedAt;
      custody.held.hold(taskId, already.message, receivedAt, epoch);
      return;
    }
    const task = { taskId, progress: 0, stage: pipelineOf(this.deps.config)[0]?.name };
    const run: Running = {
      task,
      message,
      body,
      abort: new AbortController(),
      receivedAt,
      lastProgress: mono(),
      epoch,
      parked: null,
    };
    this.running.set(taskId, run);
    custody.held.hold(taskId, message, receivedAt, epoch);
    book.record(taskId, { status: 'running', epoch });
    this.attempt(run);
  }

  /**
   * One attempt at a task. One that failed for want of AWS (S3 or SQS down, throttled, slow past
   * its timeout) is no failure of the task: it is parked, its message held and extended, and
   * tried again after a back-off. Only a real failure counts toward poison.
   */
  private attempt(run: Running): void {
    const { config, log, custody } = this.deps;
    run.lastProgress = mono();
    // Completed or given back: its message is no longer held. A task stopped by the close of a
    // worker that hands on its messages is not: it stays held for whoever carries on with it.
    let settled = true;
    let parked = false;
    const pipeline = pipelineOf(config);
    const hangMs = (name: string): number | undefined => {
      const seconds = pipeline.find((p) => p.name === name)?.hangSeconds;
      return seconds === undefined ? undefined : seconds * 1000;
    };
    const events = taskEvents(run, run.epoch, {
      book: this.deps.book,
      log,
      now: this.deps.now,
      completionWindowMs: config.completionWindowSeconds * 1000,
      stages: pipeline.length,
      hangMs,
    });
    const attempt: Promise<void> = this.deps.runner
      .run(run.body, run.message, run.epoch, run.abort.signal, this.deps.draining(), events)
      .then(async (outcome) => {
        settled = outcome !== 'aborted';
        // Stopped at a checkpoint by a switchover's drain (the worker goes on): its message goes
        // back under this lease, and the next primary resumes the task from that checkpoint.
        if (settled || this.deps.stopping.aborted || run.abort.signal.aborted) return;
        await custody.handBack(run.message, run.receivedAt);
        settled = true;
      })
      .catch(async (error: unknown) => {
        // Fenced or stopped as hung: the fence watch and the hang check already handed it back.
        if (error instanceof FencedError || run.abort.signal.aborted)
          return void (settled = !this.deps.stopping.aborted);
        if (error instanceof StageTempFailError) {
          // Exit 75: the message comes back after a back-off, counted only by SQS's receives (the backstop).
          const seconds = config.visibilityTimeoutSeconds * Math.min(30, run.message.receiveCount);
          log.info(
            { taskId: run.task.taskId, seconds },
            'a stage asked to be tried later; its message comes back after a back-off',
          );
          await custody.later(run.message, run.receivedAt, seconds);
          return;
        }
        if (isRetryable(error) && !this.deps.stopping.aborted) {
          parked = true;
          const tries = (run.parked?.tries ?? 0) + 1;
          const waitMs = Math.min(config.syncIntervalSeconds * 1000, config.retryCapSeconds * 1000 * 2 ** (tries - 1));
          run.parked = { until: mono() + waitMs, tries };
          log.warn(
            { err: describeError(error), taskId: run.task.taskId, tries },
            'task waits out an outage; its message stays held',
          );
          return;
        }
        log.error(
          { err: describeError(error), taskId: run.task.taskId },
          'task failed; its message goes back to the queue',
        );
        await custody.fail(run.message, describeError(error), run.epoch, run.receivedAt);
      })
      .finally(() => {
        this.attempts.delete(attempt);
        if (!parked) this.end(run, settled || !this.deps.handOn());
        this.deps.book.touch();
        this.deps.settled();
      });
    this.attempts.add(attempt);
  }

  /** Tries again each parked task of `epoch` whose turn came; true while any task is parked. */
  retryParked(epoch: number): boolean {
    const parked = this.all().filter((r) => r.parked !== null);
    for (const r of parked) {
      if (r.parked === null || mono() < r.parked.until || r.epoch !== epoch) continue;
      // Still parked while it tries: nothing is received until S3 has answered it.
      r.parked = { ...r.parked, until: Infinity };
      this.attempt(r);
    }
    return parked.length > 0;
  }

  /**
   * The task is over for this worker: it leaves the set, and when `release`, the held file and
   * the node's disk (its folder: what comes back later starts from its checkpoint and artifacts).
   */
  end(run: Running, release: boolean): void {
    if (this.running.get(run.task.taskId) !== run) return;
    this.running.delete(run.task.taskId);
    if (!release) return;
    this.deps.custody.held.release(run.task.taskId);
    Workspace.of(this.deps.config.dataDir, run.task.taskId).discard();
  }

  /**
   * Keeps every held message invisible while this worker may act: a lock renewal, so a message
   * held by a node that stopped (fenced, frozen, dead) comes back within a visibility timeout.
   */
  async extend(): Promise<void> {
    const { config, queue, log, lease, custody } = this.deps;
    if (!lease.mayAct()) return;
    await Promise.allSettled(
      this.all().map(async (r) => {
        const sentAt = mono();
        try {
          await queue.setVisibility(r.message.receiptHandle, config.visibilityTimeoutSeconds, lease.deadline());
        } catch (error) {
          log.debug({ err: describeError(error), taskId: r.task.taskId }, 'visibility not extended');
          return;
        }
        // Only the receipt still in use counts: SQS may have handed the message out again.
        if (this.running.get(r.task.taskId) !== r) return;
        r.receivedAt = Math.max(r.receivedAt, sentAt);
        custody.held.hold(r.task.taskId, r.message, r.receivedAt, r.epoch);
      }),
    );
  }

  clear(): void {
    this.running.clear();
  }
}
