import { STAGES, type InFlightTask } from '../../lib/core/schemas';
import type { QueueMessage } from '../../lib/aws/queue';
import type { Logger } from '../../lib/log';
import { mono } from '../runtime/clock';
import type { HeldMessages } from './held';
import type { TaskBook } from './task-book';
import type { TaskEvents } from './task-runner';

/** A task the worker runs now, with the message it came in. */
export interface Running {
  task: InFlightTask;
  message: QueueMessage;
  abort: AbortController;
  /** Monotonic ms: when the message was received (its visibility runs from here) and when the task last did work. */
  receivedAt: number;
  lastProgress: number;
}

/** What a running task's reports go to. */
export interface TaskEventsContext {
  book: TaskBook;
  held: HeldMessages;
  log: Logger;
  now: () => number;
  completionWindowMs: number;
  /** This run is still the one the worker keeps for its task (SQS may have handed the message out again). */
  current: () => boolean;
}

/** How a running task reports back: registry entries, progress for the agent's samples, the receipt held. */
export const taskEvents = (run: Running, epoch: number, c: TaskEventsContext): TaskEvents => {
  const { taskId } = run.task;
  return {
    resumed: (from) => {
      c.log.info({ taskId, from: STAGES[from] }, 'resuming from checkpoint');
      c.book.record(taskId, { stages: from });
    },
    progress: (stage, cpu) => {
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
    extended: (sentAt) => {
      // Only the receipt still in use counts: an extension of one SQS replaced changes nothing.
      if (!c.current()) return;
      run.receivedAt = Math.max(run.receivedAt, sentAt);
      c.held.hold(taskId, run.message, run.receivedAt, epoch);
    },
    done: (winner, first) => {
      c.book.record(taskId, { status: 'done', stages: STAGES.length, done: { node: winner.node, epoch: winner.epoch, at: winner.finishedAt } });
      if (first) c.book.completed(c.now(), c.completionWindowMs);
    },
  };
};
