import { describeError } from '../../lib/core/errors';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { Config } from '../../lib/core/config';
import { taskMessageSchema, type TaskMessage } from '../../lib/core/schemas';
import { parseJsonText, parseWith } from '../../lib/core/validate';
import type { Logger } from '../../lib/log';
import { alertFromNode } from '../runtime/node-alerts';
import { mono } from '../runtime/clock';
import type { RoleFile } from '../registry';
import { extendEveryMs, HeldMessages, type Leftovers } from './held';

export interface CustodyDeps {
  config: Config & { nodeName: string };
  queue: Pick<TaskQueue, 'setVisibility' | 'send' | 'delete'>;
  /** Where a task that keeps failing goes (the task queue's dead-letter queue); null: SQS's redrive decides alone. */
  deadLetters?: Pick<TaskQueue, 'send'> | null;
  log: Logger;
  now: () => number;
  alerts: AlertTopic | null;
}

/** The task message a message carries, or null when its body is not one. */
const parseTask = (m: QueueMessage): TaskMessage | null => {
  try {
    return parseWith(taskMessageSchema, parseJsonText(m.body, 'task message'), 'task message');
  } catch {
    return null;
  }
};

/** An alert's summary holds 1,000 characters: the reason's end (a stderr tail) is cut first. */
const clip = (text: string): string => (text.length <= 1000 ? text : `${text.slice(0, 997)}...`);

/** The task a message is about, or null when its body is not a task message. */
const taskOf = (m: QueueMessage): string | null => parseTask(m)?.taskId ?? null;

/**
 * The worker's messages in hand: their receipts kept on disk (so the next worker can carry on
 * with what a dead one held), handing them back to the queue, and the alerts of the last try.
 */
export class Custody {
  readonly held: HeldMessages;

  constructor(private readonly deps: CustodyDeps) {
    this.held = new HeldMessages(deps.config.dataDir, deps.config.visibilityTimeoutSeconds * 1000, deps.log);
  }

  /** Held receipts closer than this to running out are left to run out: they may be gone before SQS hears of them. */
  private get marginMs(): number {
    return extendEveryMs(this.deps.config);
  }

  /**
   * What a worker of this node that died (SIGKILL, a crash, a reboot) still held and SQS still
   * keeps invisible, by a margin (it also covers a wall clock stepped across a reboot). Each
   * stays in `held.json` until `takeUp` decides it.
   */
  leftovers(): Promise<Leftovers> {
    return this.held.leftovers(this.marginMs);
  }

  /**
   * Its tasks go on now, not after their visibility timeout, when this node is primary in the
   * epoch they were held under: no other node can have taken them up, since a new primary is a
   * new epoch. Within the same boot the worker carries on with each under its receipt (extended
   * first, so only a receipt SQS still honours is kept; `begin` runs it); across a reboot each
   * goes back to the queue at once. Otherwise they are left alone to run out (within a
   * visibility timeout): a node fenced since may no longer hand them back, since the new primary
   * may hold them under a later receive. An extension that fails leaves the message held, to be
   * taken up again while its margin lasts (`heldUnder`). Resolves once `held.json` says what it
   * decided: true when every message was decided, false when one waits for another try.
   */
  async takeUp(
    left: Leftovers,
    role: RoleFile | null,
    begin: (message: QueueMessage, epoch: number, sentAt: number) => void,
  ): Promise<boolean> {
    const { queue, log, config } = this.deps;
    let pending = false;
    await Promise.allSettled(
      left.messages.map(async ({ taskId, message, epoch }) => {
        // A file of an earlier release names no epoch: judged by the role alone, as it was then.
        if (role === null || (epoch !== null && epoch !== role.epoch)) {
          log.info(
            { taskId, heldUnder: epoch, epoch: role?.epoch ?? null },
            'left a message the previous worker held to the primary that took over, or to its visibility timeout',
          );
          return;
        }
        if (!left.sameBoot) {
          await queue.setVisibility(message.receiptHandle, 0).finally(() => this.held.release(taskId));
          log.info({ taskId }, 'handed back a message the previous worker held');
          return;
        }
        const sentAt = mono();
        try {
          await queue.setVisibility(message.receiptHandle, config.visibilityTimeoutSeconds);
        } catch (error) {
          pending = true;
          log.warn({ err: describeError(error), taskId }, 'a held message could not be extended yet; tried again');
          return;
        }
        log.info({ taskId, epoch: role.epoch }, 'carrying on with a task the previous worker held');
        begin(message, role.epoch, sentAt);
      }),
    );
    // On disk before it returns: a worker frozen or killed right after must leave the extended
    // deadlines behind, or the next one takes a receipt it extended for a lapsed one and leaves
    // it alone (a drill's lasting stall freezes a worker right here: a task then waited out its
    // visibility timeout, 565 s after its node stalled).
    await this.held.flushed();
    return !pending;
  }

  /**
   * What this node still holds under `epoch` and does not run: taken up once the worker consumes under it (`takeUp`).
   */
  heldUnder(epoch: number, running: ReadonlySet<string>): Leftovers {
    return this.held.heldUnder(epoch, running, this.marginMs);
  }

  /**
   * Messages a receive brought in after the worker began to stop: kept held (for the next worker
   * or a new primary) when it stops under a valid lease, else handed back. Never left invisible
   * with nobody knowing their receipts.
   */
  async stoppedWith(messages: readonly QueueMessage[], sentAt: number, epoch: number, handOn: boolean): Promise<void> {
    await Promise.allSettled(
      messages.map(async (m) => {
        const taskId = handOn ? taskOf(m) : null;
        if (taskId !== null) this.held.hold(taskId, m, sentAt, epoch);
        else await this.deps.queue.setVisibility(m.receiptHandle, 0);
      }),
    );
    this.deps.log.info(
      { messages: messages.length, kept: handOn },
      'a receive answered while stopping: its messages kept held or handed back',
    );
  }

  /**
   * Makes a message visible again at once, unless its visibility already ran out by this
   * node's clock: then another consumer may hold it, and its old receipt must not touch it.
   */
  async handBack(message: QueueMessage, receivedAt: number): Promise<void> {
    if (mono() - receivedAt >= this.deps.config.visibilityTimeoutSeconds * 1000) return;
    await this.deps.queue.setVisibility(message.receiptHandle, 0).catch(() => undefined);
  }

  /** Lets the message come back in `seconds`, unless its visibility already ran out (as `handBack`). */
  async later(message: QueueMessage, receivedAt: number, seconds: number): Promise<void> {
    if (mono() - receivedAt >= this.deps.config.visibilityTimeoutSeconds * 1000) return;
    await this.deps.queue.setVisibility(message.receiptHandle, seconds).catch(() => undefined);
  }

  /**
   * A real failure of the message's task: its stage failed or hung, or its body is no task.
   * Failures are counted in the message's `failures` attribute, so hand-backs that are no failure
   * (fencing, a drain, a lease lapsed during a receive, a duplicate) never count toward poison,
   * as SQS's receive count does, and the body stays the producer's. Below `maxTaskFailures` the
   * task goes back at once as a new message carrying the count, then the old one is deleted; at
   * the limit, or for a body no worker can read, it goes to the dead-letter queue, alerted with
   * the reason. A send that fails hands the message back instead (SQS's redrive, at
   * `maxReceiveCount` receives, stays the backstop); a delete that fails leaves a copy that comes
   * back later, completed at most once by `done.json`. Without a dead-letter queue configured, it
   * is handed back and the redrive decides, alerted on its last allowed receive.
   */
  async fail(message: QueueMessage, reason: string, epoch: number, receivedAt: number): Promise<void> {
    const { config, queue, deadLetters, log } = this.deps;
    if (deadLetters === undefined || deadLetters === null) {
      await this.handBack(message, receivedAt);
      if (message.receiveCount < config.maxReceiveCount) return;
      await this.alert(
        'POISON_TASK',
        `poison-${message.id}`,
        epoch,
        `message ${message.id} failed ${message.receiveCount} times: ${reason}`,
      );
      return;
    }
    // Its visibility ran out: another consumer may hold it now, and it is not this worker's to move.
    if (mono() - receivedAt >= config.visibilityTimeoutSeconds * 1000) return;
    const task = parseTask(message);
    // A count in the body is the format of earlier releases.
    const failures = Math.max(message.failures ?? 0, task?.failures ?? 0) + 1;
    const poison = task === null || failures >= config.maxTaskFailures;
    try {
      await (poison ? deadLetters : queue).send(message.body, failures);
    } catch (error) {
      log.warn(
        { err: describeError(error), messageId: message.id },
        'failed task not moved; handed back for SQS to redeliver',
      );
      await this.handBack(message, receivedAt);
      return;
    }
    await queue
      .delete(message.receiptHandle)
      .catch((error: unknown) =>
        log.warn(
          { err: describeError(error), messageId: message.id },
          'old copy of a moved task not deleted; it returns after its visibility timeout',
        ),
      );
    if (!poison) return;
    const what =
      task === null ? `message ${message.id} is no task message` : `task ${task.taskId} failed ${failures} times`;
    await this.alert(
      'POISON_TASK',
      `poison-${message.id}`,
      epoch,
      clip(`${what}. Moved to the dead-letter queue. ${reason}`),
    );
  }

  alert(kind: 'POISON_TASK' | 'MANIFEST_DAMAGED', incidentId: string, epoch: number, summary: string): Promise<void> {
    return alertFromNode(this.deps.alerts, this.deps.log, {
      kind,
      node: this.deps.config.nodeName,
      incidentId,
      epoch,
      at: this.deps.now(),
      summary,
    });
  }
}
