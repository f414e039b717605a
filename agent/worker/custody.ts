import { describeError } from '../../lib/core/errors';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { Config } from '../../lib/core/config';
import type { StateStore } from '../../lib/aws/state-store';
import { KEYS } from '../../lib/core/keys';
import { heartbeatSchema, taskMessageSchema, type Heartbeat } from '../../lib/core/schemas';
import { parseJsonText, parseWith } from '../../lib/core/validate';
import type { Logger } from '../../lib/log';
import { alertFromNode } from '../runtime/node-alerts';
import { mono } from '../runtime/clock';
import type { RoleFile } from '../registry';
import { HeldMessages, type Leftovers } from './held';

export interface CustodyDeps {
  config: Config & { nodeName: string };
  queue: Pick<TaskQueue, 'setVisibility'>;
  store: Pick<StateStore, 'read'>;
  log: Logger;
  now: () => number;
  alerts: AlertTopic | null;
}

/** The task a message is about, or null when its body is not a task message. */
const taskOf = (m: QueueMessage): string | null => {
  try {
    return parseWith(taskMessageSchema, parseJsonText(m.body, 'task message'), 'task message').taskId;
  } catch {
    return null;
  }
};

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
   * a reboot). Each stays in `held.json` until `takeUp` decides it.
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
          await queue.setVisibility(message.receiptHandle, 0).finally(() => this.held.release(taskId));
          log.info({ taskId }, 'handed back a message the previous worker held');
          return;
        }
        const sentAt = mono();
        try {
          await queue.setVisibility(message.receiptHandle, config.visibilityTimeoutSeconds);
        } catch (error) {
          this.held.release(taskId);
          log.warn({ err: describeError(error), taskId }, 'a held message could not be extended; it returns after its visibility timeout');
          return;
        }
        log.info({ taskId, epoch: role.epoch }, 'carrying on with a task the previous worker held');
        begin(message, role.epoch, sentAt);
      }),
    );
  }

  /**
   * On taking the role, before its first receive: every other node is fenced now (the lease
   * lapsed, or its worker was confirmed stopped), so the messages their heartbeats say they held
   * are taken up at once, as `takeUp` does with this node's own: carried on with under their
   * receipts (extended first, so only a receipt SQS still honours is kept) while slots are free,
   * and handed back otherwise. Their tasks resume from their checkpoints now rather than after
   * their visibility timeout. Tasks this worker runs itself (carried on from its own previous
   * worker) are left alone: an older receipt of them must not touch them. A receipt SQS no
   * longer honours (completed, or expired) fails harmlessly. Returns how many were taken up.
   */
  async takeOverFenced(epoch: number, running: ReadonlySet<string>, free: number, begin: (message: QueueMessage, epoch: number, sentAt: number) => void): Promise<number> {
    const { config, store, queue, log } = this.deps;
    const others = config.nodes.filter((n) => n.name !== config.nodeName);
    const beats = await Promise.all(others.map((n) => store.read(KEYS.heartbeat(n.name), heartbeatSchema).catch(() => null)));
    // Each task once (two fenced nodes may both list it), and none this worker runs.
    const byTask = new Map<string, NonNullable<Heartbeat['held']>[number] & { node: string }>();
    for (const hb of beats) for (const h of hb?.value.held ?? []) if (!running.has(h.taskId) && !byTask.has(h.taskId)) byTask.set(h.taskId, { ...h, node: hb?.value.node ?? '?' });
    const held = [...byTask.values()];
    let slots = free;
    const outcome = await Promise.all(
      held.map(async (h): Promise<'carried' | 'handed' | 'failed'> => {
        const message: QueueMessage | null = h.body === undefined ? null : { id: h.id, receiptHandle: h.receipt, body: h.body, receiveCount: h.receiveCount };
        if (message === null || slots <= 0) return queue.setVisibility(h.receipt, 0).then(() => 'handed' as const, () => 'failed' as const);
        slots--;
        const sentAt = mono();
        // Slots are handed out in order before any answer: a failed extension frees none for a later message.
        const extended = await queue.setVisibility(h.receipt, config.visibilityTimeoutSeconds).then(() => true, () => false);
        if (!extended) return 'failed';
        begin(message, epoch, sentAt);
        return 'carried';
      }),
    );
    const carried = outcome.filter((o) => o === 'carried').length;
    if (held.length > 0) log.info({ epoch, carried, handedBack: outcome.filter((o) => o === 'handed').length, tasks: held.map((h) => `${h.node}:${h.taskId}`) }, 'took up the messages fenced nodes held');
    return carried;
  }

  /**
   * Messages a receive brought in after the worker began to stop: kept held (for the next worker
   * or a new primary) when it stops under a valid lease, else handed back. Never left invisible
   * with nobody knowing their receipts.
   */
  async stoppedWith(messages: readonly QueueMessage[], sentAt: number, handOn: boolean): Promise<void> {
    await Promise.allSettled(
      messages.map(async (m) => {
        const taskId = handOn ? taskOf(m) : null;
        if (taskId !== null) this.held.hold(taskId, m, sentAt);
        else await this.deps.queue.setVisibility(m.receiptHandle, 0);
      }),
    );
    this.deps.log.info({ messages: messages.length, kept: handOn }, 'a receive answered while stopping: its messages kept held or handed back');
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
