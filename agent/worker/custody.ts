import { describeError } from '../../lib/core/errors';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { Config } from '../../lib/core/config';
import type { Logger } from '../../lib/log';
import { alertFromNode } from '../runtime/node-alerts';
import { mono } from '../runtime/clock';
import type { RoleFile } from '../registry';
import { HeldMessages, type Leftovers } from './held';

export interface CustodyDeps {
  config: Config & { nodeName: string };
  queue: Pick<TaskQueue, 'setVisibility'>;
  log: Logger;
  now: () => number;
  alerts: AlertTopic | null;
}

/**
 * The worker's messages in hand: their receipts kept on disk (so the next worker can carry on
 * with what a dead one held), handing them back to the queue, and the alerts of the last try.
 */
export class Custody {
  readonly held: HeldMessages;

  constructor(private readonly deps: CustodyDeps) {
    this.held = new HeldMessages(deps.config.dataDir, deps.config.visibilityTimeoutSeconds * 1000, deps.log);
  }

  /**
   * What a worker of this node that died (SIGKILL, a crash, a reboot) still held and SQS still
   * keeps invisible, by a margin of a sync interval (it also covers a wall clock stepped across
   * a reboot). Read once: the file is emptied.
   */
  leftovers(): Promise<Leftovers> {
    return this.held.leftovers(this.deps.config.syncIntervalSeconds * 1000);
  }

  /**
   * Its tasks go on now, not after their visibility timeout. Within the same boot, under a role
   * that may consume, the worker carries on with each under its receipt: extended first, so only
   * a receipt SQS still honours is kept (`begin` runs it). Otherwise each goes back to the
   * queue at once, for whoever is primary.
   */
  async takeUp(left: Leftovers, role: RoleFile | null, begin: (message: QueueMessage, epoch: number, sentAt: number) => void): Promise<void> {
    const { queue, log, config } = this.deps;
    await Promise.allSettled(
      left.messages.map(async ({ taskId, message }) => {
        if (role === null || !left.sameBoot) {
          await queue.setVisibility(message.receiptHandle, 0);
          log.info({ taskId }, 'handed back a message the previous worker held');
          return;
        }
        const sentAt = mono();
        try {
          await queue.setVisibility(message.receiptHandle, config.visibilityTimeoutSeconds);
        } catch (error) {
          log.warn({ err: describeError(error), taskId }, 'a held message could not be extended; it returns after its visibility timeout');
          return;
        }
        log.info({ taskId, epoch: role.epoch }, 'carrying on with a task the previous worker held');
        begin(message, role.epoch, sentAt);
      }),
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

  /**
   * Hands a message back (so a retry does not wait out the visibility timeout); on its last
   * allowed receive, SQS's redrive moves it to the dead-letter queue next: alert.
   */
  async giveBack(message: QueueMessage, reason: string, epoch: number, receivedAt: number): Promise<void> {
    await this.handBack(message, receivedAt);
    if (message.receiveCount < this.deps.config.maxReceiveCount) return;
    await this.alert('POISON_TASK', `poison-${message.id}`, epoch, `message ${message.id} failed ${message.receiveCount} times: ${reason}`);
  }

  alert(kind: 'POISON_TASK' | 'MANIFEST_DAMAGED', incidentId: string, epoch: number, summary: string): Promise<void> {
    return alertFromNode(this.deps.alerts, this.deps.log, { kind, node: this.deps.config.nodeName, incidentId, epoch, at: this.deps.now(), summary });
  }
}
