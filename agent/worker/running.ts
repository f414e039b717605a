import { STAGES, type InFlightTask } from '../../lib/core/schemas';
import type { QueueMessage } from '../../lib/aws/queue';
import type { Logger } from '../../lib/log';
import { mono } from '../runtime/clock';
import type { TaskBook } from './task-book';
import type { TaskEvents } from './task-runner';

/** A task the worker runs now, with the message it came in. */
export interface Running {
  task: InFlightTask;
  message: QueueMessage;
  abort: AbortController;
  /** Monotonic ms: when the message was received or last extended (its visibility runs from here). */
  receivedAt: number;
  /** Monotonic ms: when the task last did work. */
  lastProgress: number;
  /** The epoch it was received or carried on under. */
  epoch: number;
  /** The synthetic stage's work, from the message. */
  workSeconds: number;
  /**
   * Set while the task waits out an outage: its last attempt failed for want of AWS, so its
   * message stays held (and extended) and it is tried again at `until` (monotonic ms).
   */
  parked: { until: number; tries: number } | null;
}

/** What a running task's reports go to. */
export interface TaskEventsContext {
  book: TaskBook;
  log: Logger;
  now: () => number;
  completionWindowMs: number;
}

/** How a running task reports back: registry entries and progress for the agent's samples. */
export const taskEvents = (run: Running, epoch: number, c: TaskEventsContext): TaskEvents => {
  const { taskId } = run.task;
  return {
    // S3 answered and a stage runs: a task that waited out an outage is no longer waiting.
    resumed: (from) => {
      run.parked = null;
      c.log.info({ taskId, from: STAGES[from] }, 'resuming from checkpoint');
      c.book.record(taskId, { stages: from });
    },
    progress: (stage, cpu) => {
      run.parked = null;
      run.lastProgress = mono();
      run.task.progress++;
      run.task.stage = STAGES[stage];
      if (cpu !== undefined) run.task.stageCpuMs = cpu;
      c.book.record(taskId, { progress: run.task.progress });
    },
    checkpointed: (stages) => {
      run.lastProgress = mono();
      c.book.record(taskId, { status: 'checkpointed', stages, epoch });
    },
    done: (winner, first) => {
      c.book.record(taskId, { status: 'done', stages: STAGES.length, done: { node: winner.node, epoch: winner.epoch, at: winner.finishedAt } });
      if (first) c.book.completed(c.now(), c.completionWindowMs);
    },
  };
};
