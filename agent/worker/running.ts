import type { InFlightTask, TaskMessage } from '../../lib/core/schemas';
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
  /** The message's body, parsed. */
  body: TaskMessage;
  /**
   * Set while the task waits out an outage: its last attempt failed for want of AWS, so its
   * message stays held (and extended) and it is tried again at `until` (monotonic ms).
   */
  parked: { until: number; tries: number } | null;
  /** The running stage's own hang limit (its `hangSeconds`), when it has one. */
  hangMs?: number | undefined;
}

/** What a running task's reports go to. */
export interface TaskEventsContext {
  book: TaskBook;
  log: Logger;
  now: () => number;
  completionWindowMs: number;
  /** The pipeline's length. */
  stages: number;
  /** A stage's own hang limit, or undefined for the worker's. */
  hangMs: (stage: string) => number | undefined;
}

/** How a running task reports back: registry entries and progress for the agent's samples. */
export const taskEvents = (run: Running, epoch: number, c: TaskEventsContext): TaskEvents => {
  const { taskId } = run.task;
  return {
    // S3 answered and a stage runs: a task that waited out an outage is no longer waiting.
    resumed: (from, name) => {
      run.parked = null;
      c.log.info({ taskId, from: name }, 'resuming from checkpoint');
      c.book.record(taskId, { stages: from });
    },
    progress: (stage, report) => {
      run.parked = null;
      run.lastProgress = mono();
      run.task.progress++;
      run.task.stage = stage;
      run.hangMs = c.hangMs(stage);
      if (report.cpuMs !== undefined) run.task.stageCpuMs = report.cpuMs;
      c.book.record(taskId, { progress: run.task.progress });
    },
    checkpointed: (stages) => {
      run.lastProgress = mono();
      c.book.record(taskId, { status: 'checkpointed', stages, epoch });
    },
    done: (winner, first) => {
      c.book.record(taskId, {
        status: 'done',
        stages: c.stages,
        done: { node: winner.node, epoch: winner.epoch, at: winner.finishedAt },
      });
      if (first) c.book.completed(c.now(), c.completionWindowMs);
    },
  };
};
