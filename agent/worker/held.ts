import { z } from 'zod';
import { describeError } from '../../lib/core/errors';
import type { Config } from '../../lib/core/config';
import { taskIdSchema } from '../../lib/core/schemas';
import type { QueueMessage } from '../../lib/aws/queue';
import type { Logger } from '../../lib/log';
import { bootId } from '../runtime/boot';
import { mono, wall } from '../runtime/clock';
import { readJsonFile, writeJsonAtomic } from '../registry';

/**
 * The messages this worker holds, each with its receipt and until when SQS keeps it invisible:
 * `held.json` in the data directory, written whenever the set changes. A worker that died
 * (SIGKILL, a crash, a reboot) cannot hand its messages back; the next worker on the node
 * reads this file at start and carries on with those still invisible (Custody.takeUp), so their
 * tasks resume at once instead of after their visibility timeout.
 */
const heldSchema = z.object({
  version: z.literal(1),
  /** The machine boot the monotonic deadlines belong to. */
  boot: z.string().max(64),
  messages: z.record(
    taskIdSchema,
    z.object({
      receipt: z.string().min(1).max(2048),
      /** The message as received, so the next worker can carry on with it. */
      id: z.string().min(1).max(128),
      /** SQS's largest message body (1 MiB). */
      body: z.string().max(1_048_576),
      receiveCount: z.number().int().min(1),
      failures: z.number().int().min(0).optional(),
      /** Invisible until: CLOCK_MONOTONIC ms (same boot) and the wall clock (after a reboot). */
      invisibleUntilMono: z.number(),
      invisibleUntilWall: z.number(),
      /** The epoch it was received or carried on under; absent in files of earlier releases (then unknown). */
      epoch: z.number().int().min(0).optional(),
    }),
  ),
});
type HeldFile = z.output<typeof heldSchema>;
type HeldMessage = HeldFile['messages'][string];

/** What a worker that died left in hand: still invisible under its receipt. */
export interface Leftovers {
  /** Same machine boot: the monotonic deadlines hold, and the next worker may carry on with them. */
  sameBoot: boolean;
  messages: { taskId: string; message: QueueMessage; epoch: number | null }[];
}

export const heldPath = (dataDir: string): string => `${dataDir}/held.json`;

/** A held message as the queue gave it. */
const asMessage = (m: HeldMessage): QueueMessage => ({
  id: m.id,
  receiptHandle: m.receipt,
  body: m.body,
  receiveCount: m.receiveCount,
  ...(m.failures === undefined ? {} : { failures: m.failures }),
});

/**
 * How often a held message's visibility is extended: a third of the visibility timeout, so two
 * extensions in a row may fail before SQS hands the message out again.
 */
export const extendEveryMs = (c: Pick<Config, 'visibilityTimeoutSeconds'>): number =>
  (c.visibilityTimeoutSeconds * 1000) / 3;

/**
 * Which leftovers of a previous worker may be handed back: only those whose visibility has not
 * run out, with `marginMs` to spare. Once it ran out, SQS may have handed the message to another
 * consumer, and a receipt of an earlier receive must not touch it. Within one boot the monotonic
 * clock decides; across a reboot only this machine's wall clock can, and the margin covers its
 * steps. Pure.
 */
export const stillInvisible = (
  m: HeldMessage,
  sameBoot: boolean,
  now: { mono: number; wall: number },
  marginMs: number,
): boolean => (sameBoot ? now.mono < m.invisibleUntilMono - marginMs : now.wall < m.invisibleUntilWall - marginMs);

export class HeldMessages {
  private readonly messages = new Map<string, HeldMessage>();
  /** Writes run one after another, the newest state last. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly visibilityMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * The message of `taskId` is invisible from `sentAt` (monotonic ms when the receive or the
   * extension that made it so was sent) for the visibility timeout.
   */
  hold(taskId: string, message: QueueMessage, sentAt: number, epoch: number): void {
    const left = this.visibilityMs - (mono() - sentAt);
    const { receiptHandle: receipt, id, body, receiveCount, failures } = message;
    this.messages.set(taskId, {
      receipt,
      id,
      body,
      receiveCount,
      failures,
      invisibleUntilMono: sentAt + this.visibilityMs,
      invisibleUntilWall: wall() + left,
      epoch,
    });
    this.save();
  }

  /** The tasks whose messages are held now. */
  taskIds(): IterableIterator<string> {
    return this.messages.keys();
  }

  release(taskId: string): void {
    if (this.messages.delete(taskId)) this.save();
  }

  /**
   * This node's own messages held under `epoch` whose tasks are not running here, with a margin
   * of visibility left: what the worker still has to take up (its agent was pending at its start,
   * a lease lapsed for a moment, or an extension at the take-up failed).
   */
  heldUnder(epoch: number, running: ReadonlySet<string>, marginMs: number): Leftovers {
    const now = { mono: mono(), wall: wall() };
    const mine = [...this.messages].filter(
      ([taskId, m]) => m.epoch === epoch && !running.has(taskId) && stillInvisible(m, true, now, marginMs),
    );
    return { sameBoot: true, messages: mine.map(([taskId, m]) => ({ taskId, message: asMessage(m), epoch })) };
  }

  private save(): void {
    // Messages whose visibility ran out are no one's to touch through this file any more.
    const now = mono();
    for (const [taskId, m] of this.messages) if (m.invisibleUntilMono <= now) this.messages.delete(taskId);
    const file: HeldFile = { version: 1, boot: bootId(), messages: Object.fromEntries(this.messages) };
    this.writing = this.writing
      .then(() => writeJsonAtomic(heldPath(this.dataDir), file))
      .catch((error: unknown) =>
        this.log.warn(
          { err: describeError(error) },
          'held messages not written; a crash now leaves them to their visibility timeout',
        ),
      );
  }

  /** Waits for the writes under way. */
  flushed(): Promise<void> {
    return this.writing;
  }

  /**
   * At start: what the previous worker of this node still held and SQS still keeps invisible,
   * as messages (the rest is dropped: its visibility may have run out). They stay in the file
   * until the caller decides each (`hold` when it carries on, `release` when it hands it back),
   * so a worker that dies or freezes before deciding leaves them there, for the next worker or,
   * through the heartbeat, for a new primary. A damaged file is only logged: its messages wait
   * out their visibility timeout, as they would without this file.
   */
  async leftovers(marginMs: number): Promise<Leftovers> {
    let file: HeldFile | null;
    try {
      file = await readJsonFile(heldPath(this.dataDir), heldSchema);
    } catch (error) {
      this.log.warn({ err: describeError(error) }, 'held messages unreadable; they wait out their visibility timeout');
      file = null;
    }
    const sameBoot = file?.boot === bootId();
    const now = { mono: mono(), wall: wall() };
    // Across a reboot the monotonic deadlines mean nothing: taken again from the wall clock's.
    const all = Object.entries(file?.messages ?? {});
    const invisible = all.filter(([, m]) => stillInvisible(m, sameBoot, now, marginMs));
    if (invisible.length < all.length) {
      const lapsed = all.filter((e) => !invisible.includes(e)).map(([taskId]) => taskId);
      this.log.warn({ tasks: lapsed, sameBoot }, 'held messages too close to their visibility timeout: left to it');
    }
    const kept = invisible.map(
      ([taskId, m]) =>
        [
          taskId,
          sameBoot ? m : { ...m, invisibleUntilMono: now.mono + (m.invisibleUntilWall - now.wall) - marginMs },
        ] as const,
    );
    for (const [taskId, m] of kept) this.messages.set(taskId, m);
    this.save();
    await this.flushed();
    return {
      sameBoot,
      messages: kept.map(([taskId, m]) => ({ taskId, message: asMessage(m), epoch: m.epoch ?? null })),
    };
  }
}
