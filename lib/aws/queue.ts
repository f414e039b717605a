import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { toFleetError } from './errors';

/** Header that names the consumer's epoch on every receive. */
export const EPOCH_HEADER = 'x-queen-fleet-epoch';

/** One SQS call, its failure as a FleetError naming the call. */
export const callSqs = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (error) {
    throw toFleetError(error, `SQS ${what}`);
  }
};

/** A received task message in domain terms. */
export interface QueueMessage {
  id: string;
  receiptHandle: string;
  body: string;
  /** How many times SQS has handed this message out, this time included. */
  receiveCount: number;
  /** Real failures of its task so far: the `failures` attribute the worker sets when it sends a failed task back. */
  failures?: number;
}

/** The message attribute that counts a task's real failures, so its body stays the producer's, byte for byte. */
export const FAILURES_ATTRIBUTE = 'failures';

/** The task queue: receive, acknowledge, extend, measure. One adapter for SQS. */
export class TaskQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return callSqs(what, fn);
  }

  /**
   * Long-polls for up to `max` messages for `waitSeconds`: whole seconds on AWS; a time-scaled
   * drill passes whole seconds of its own time, a fraction its local cloud accepts. `epoch` travels as the
   * `x-queen-fleet-epoch` header:
   * SQS ignores it, request logs and the drills' invariant checker read it.
   */
  async receive(
    max: number,
    waitSeconds: number,
    visibilitySeconds: number,
    signal?: AbortSignal,
    epoch?: number,
    timeoutMs?: number,
  ): Promise<QueueMessage[]> {
    const command = new ReceiveMessageCommand({
      QueueUrl: this.queueUrl,
      MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: Math.max(1, Math.ceil(visibilitySeconds)),
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      MessageAttributeNames: [FAILURES_ATTRIBUTE],
    });
    if (epoch !== undefined) {
      command.middlewareStack.add(
        (next) => (args) => {
          (args.request as { headers: Record<string, string> }).headers[EPOCH_HEADER] = String(epoch);
          return next(args);
        },
        { step: 'build', name: 'queenFleetEpochHeader' },
      );
    }
    // The client's request timeout is shorter than a long poll: this one waits its own wait on top.
    const requestTimeout = timeoutMs === undefined ? undefined : waitSeconds * 1000 + timeoutMs;
    const out = await this.call('ReceiveMessage', () =>
      this.sqs.send(command, { abortSignal: signal, requestTimeout }),
    );
    return (out.Messages ?? []).flatMap((m) =>
      m.MessageId === undefined || m.ReceiptHandle === undefined
        ? []
        : [
            {
              id: m.MessageId,
              receiptHandle: m.ReceiptHandle,
              body: m.Body ?? '',
              receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? '1'),
              failures: Math.max(
                0,
                Math.floor(Number(m.MessageAttributes?.[FAILURES_ATTRIBUTE]?.StringValue ?? '0')) || 0,
              ),
            },
          ],
    );
  }

  /** `signal` abandons the call and its retries (a worker's lease ending). */
  async delete(receiptHandle: string, signal?: AbortSignal): Promise<void> {
    await this.call('DeleteMessage', () =>
      this.sqs.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle }), {
        abortSignal: signal,
      }),
    );
  }

  async setVisibility(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    const command = new ChangeMessageVisibilityCommand({
      QueueUrl: this.queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: Math.max(0, Math.ceil(seconds)),
    });
    await this.call('ChangeMessageVisibility', () => this.sqs.send(command, { abortSignal: signal }));
  }

  /** Sends `body` as it is; `failures`, when given, travels as the message's `failures` attribute. */
  async send(body: string, failures?: number): Promise<string> {
    const attributes =
      failures === undefined
        ? {}
        : { MessageAttributes: { [FAILURES_ATTRIBUTE]: { DataType: 'Number', StringValue: String(failures) } } };
    const out = await this.call('SendMessage', () =>
      this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, ...attributes })),
    );
    return out.MessageId ?? '';
  }

  /** The ARN of the dead-letter queue in the queue's redrive policy, or null when it has none. */
  async deadLetterArn(): Promise<string | null> {
    const out = await this.call('GetQueueAttributes', () =>
      this.sqs.send(new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ['RedrivePolicy'] })),
    );
    const policy = out.Attributes?.RedrivePolicy;
    if (policy === undefined || policy === '') return null;
    try {
      const arn = (JSON.parse(policy) as { deadLetterTargetArn?: unknown }).deadLetterTargetArn;
      return typeof arn === 'string' && arn !== '' ? arn : null;
    } catch {
      return null;
    }
  }

  /** Visible plus in-flight messages: the work the fleet still owes. */
  async backlog(): Promise<{ visible: number; inFlight: number }> {
    const out = await this.call('GetQueueAttributes', () =>
      this.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      ),
    );
    return {
      visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? '0'),
      inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? '0'),
    };
  }
}
