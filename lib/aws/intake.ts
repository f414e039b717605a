import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { callSqs, TaskQueue } from './queue';

/** How long a message the watchdog took from intake stays invisible while it moves it. */
const MOVE_VISIBILITY_SECONDS = 30;

/** The depths one admitting watchdog run reads (GetQueueAttributes, one request per queue). */
export interface QueueDepths {
  backlog: number;
  intake: number;
  deadLetters?: number;
  notifierFailures?: number;
}

/** SQS's limit on a message, and on the sum of a batch's messages: 1 MiB. */
export const MAX_PAYLOAD_BYTES = 1_048_576;

/** Messages in order, in batches whose bodies together stay within SQS's batch payload limit. */
export const byPayload = <T extends { Body?: string | undefined }>(messages: readonly T[]): T[][] => {
  const batches: T[][] = [];
  let size = Infinity;
  for (const m of messages) {
    const bytes = Buffer.byteLength(m.Body ?? '');
    if (size + bytes > MAX_PAYLOAD_BYTES) {
      batches.push([]);
      size = 0;
    }
    batches.at(-1)?.push(m);
    size += bytes;
  }
  return batches;
};

/**
 * The intake queue producers send to, and the watchdog's admission from it to the task queue:
 * receive (no wait), send the bodies on as a batch, delete from intake only what the task queue
 * accepted. A message whose send failed reappears in intake after its short visibility; one sent
 * but not deleted (the delete's answer lost) is admitted twice, which the task queue's at-least-
 * once handling already covers (done.json decides a task once). One adapter for both queues' part in it.
 */
export class IntakeQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly intakeUrl: string,
    readonly taskQueueUrl: string,
    /** The task queue's dead-letter queue: its depth is read with the others, so every arrival is alerted. */
    readonly deadLetterUrl: string | null = null,
    /** The Slack notifier's failure queue, read the same way. */
    readonly notifierFailureUrl: string | null = null,
  ) {}

  private readonly call = callSqs;

  /**
   * What admission decides on: the task queue's backlog (visible and in flight) and what waits
   * in intake; and what the dead-letter and notifier-failure queues hold, when they are known
   * and `failureQueues` is not false.
   */
  async depths(options: { failureQueues?: boolean } = {}): Promise<QueueDepths> {
    const queue = (url: string) => new TaskQueue(this.sqs, url).backlog();
    const optional = async (url: string | null) =>
      url === null || options.failureQueues === false ? null : queue(url).then((d) => d.visible + d.inFlight);
    const [tasks, intake, dead, failed] = await Promise.all([
      queue(this.taskQueueUrl),
      queue(this.intakeUrl),
      optional(this.deadLetterUrl),
      optional(this.notifierFailureUrl),
    ]);
    return {
      backlog: tasks.visible + tasks.inFlight,
      intake: intake.visible,
      ...(dead === null ? {} : { deadLetters: dead }),
      ...(failed === null ? {} : { notifierFailures: failed }),
    };
  }

  /** Moves up to `count` messages from intake to the task queue, ten at a time; returns how many moved. */
  async admit(count: number): Promise<number> {
    let moved = 0;
    while (moved < count) {
      const want = Math.min(10, count - moved);
      const got = await this.call('ReceiveMessage', () =>
        this.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.intakeUrl,
            MaxNumberOfMessages: want,
            WaitTimeSeconds: 0,
            VisibilityTimeout: MOVE_VISIBILITY_SECONDS,
          }),
        ),
      );
      const messages = (got.Messages ?? []).filter((m) => m.ReceiptHandle !== undefined && m.Body !== undefined);
      if (messages.length === 0) break;
      const done: typeof messages = [];
      for (const batch of byPayload(messages)) {
        const sent = await this.call('SendMessageBatch', () =>
          this.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: this.taskQueueUrl,
              Entries: batch.map((m, i) => ({ Id: String(i), MessageBody: m.Body ?? '' })),
            }),
          ),
        );
        const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
        done.push(...batch.filter((_, i) => ok.has(String(i))));
      }
      if (done.length > 0) {
        await this.call('DeleteMessageBatch', () =>
          this.sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: this.intakeUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
            }),
          ),
        );
      }
      moved += done.length;
      if (done.length < messages.length) break;
    }
    return moved;
  }
}
