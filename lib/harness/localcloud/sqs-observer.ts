import type { FastifyReply, FastifyRequest } from 'fastify';
import { EPOCH_HEADER } from '../../aws/queue';
import { jsonBody, principalOf } from './aws-wire';

/** What the drill watches of SQS (a subset of CloudObserver). */
export interface SqsObserver {
  /**
   * Every SQS ReceiveMessage answered, with the messages it handed out; `epoch` is the
   * consumer's own word, from the x-queen-fleet-epoch header (null if absent).
   */
  sqsReceive?(count: number, principal: string, epoch: number | null, taskIds: string[]): void;
  /** A task given up and retried: handed back at once (visibility 0), or sent back as a new message after a failure. */
  sqsGiveBack?(principal: string): void;
  /** A message's visibility extended: its consumer is working on the task (or carrying on with it after a restart). */
  sqsExtend?(principal: string, taskId: string): void;
}

/** The task a message body names ([] for a body that is not a task, such as a poison message). */
const taskIdOf = (body: string | undefined): string[] => {
  try {
    const id = (JSON.parse(body ?? '') as { taskId?: unknown }).taskId;
    return typeof id === 'string' ? [id] : [];
  } catch {
    return [];
  }
};

const bodyOf = (request: FastifyRequest): Record<string, unknown> => {
  try {
    return jsonBody(request);
  } catch {
    // Not JSON: fauxqs refused it already.
    return {};
  }
};

/**
 * Watches the task queue's traffic for the drill: every receive with the tasks it handed out
 * (the consumer's epoch from its header), every task given back to be tried again (a hand-back
 * at visibility 0, or a failed task a worker sends back as a new message), every extension of a
 * task's message. Receives from intake (the watchdog's admission) are not a consumer's, and
 * only workers send to the task queue itself (producers and the harness send to intake).
 */
export class SqsWatch {
  /** The task of each receipt handed out, for naming the task of a visibility change. */
  private readonly receipts = new Map<string, string>();

  constructor(
    private readonly observer: SqsObserver,
    private readonly taskQueue: string,
  ) {}

  private isTaskQueue(body: Record<string, unknown>): boolean {
    return typeof body.QueueUrl === 'string' && body.QueueUrl.endsWith(`/${this.taskQueue}`);
  }

  /** Called with each answered request (an onSend hook). */
  answered(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const target = request.headers['x-amz-target'];
    if (typeof target !== 'string' || !target.startsWith('AmazonSQS.') || reply.statusCode !== 200) return;
    const principal = principalOf(request);
    const body = bodyOf(request);
    if (target === 'AmazonSQS.ReceiveMessage' && typeof payload === 'string' && this.isTaskQueue(body)) {
      const messages =
        (JSON.parse(payload) as { Messages?: { Body?: string; ReceiptHandle?: string }[] }).Messages ?? [];
      for (const m of messages)
        for (const id of taskIdOf(m.Body)) if (m.ReceiptHandle !== undefined) this.receipts.set(m.ReceiptHandle, id);
      const epoch = Number(request.headers[EPOCH_HEADER] ?? Number.NaN);
      this.observer.sqsReceive?.(
        messages.length,
        principal,
        Number.isInteger(epoch) ? epoch : null,
        messages.flatMap((m) => taskIdOf(m.Body)),
      );
    }
    if (target === 'AmazonSQS.SendMessage' && this.isTaskQueue(body)) this.observer.sqsGiveBack?.(principal);
    if (target === 'AmazonSQS.ChangeMessageVisibility') {
      if (body.VisibilityTimeout === 0) this.observer.sqsGiveBack?.(principal);
      const task = typeof body.ReceiptHandle === 'string' ? this.receipts.get(body.ReceiptHandle) : undefined;
      if (typeof body.VisibilityTimeout === 'number' && body.VisibilityTimeout > 0 && task !== undefined)
        this.observer.sqsExtend?.(principal, task);
    }
  }
}
