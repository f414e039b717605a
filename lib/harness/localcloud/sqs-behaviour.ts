import type { FastifyReply, FastifyRequest } from 'fastify';
import { jsonBody } from './aws-wire';
import type { Behaviour } from './behaviour';
import type { Chance } from './chance';

/**
 * SQS's at-least-once delivery (sqsRedelivery): a share of deletes answer success without
 * deleting, so the message comes back after its visibility timeout. For DeleteMessage the whole
 * call; for DeleteMessageBatch each entry on its own, still reported under `Successful`.
 */
export class SqsRedelivery {
  /** The ids of batch entries kept back from the store, per request, to be reported as deleted. */
  private readonly keptBack = new WeakMap<FastifyRequest, string[]>();

  constructor(
    private readonly behaviour: Behaviour['sqsRedelivery'],
    private readonly chance: Chance,
    private readonly strike: (what: string) => void,
  ) {}

  /** Before fauxqs handles the request: true when it was answered here. */
  preHandler(request: FastifyRequest, reply: FastifyReply): boolean {
    if (!this.behaviour.on) return false;
    const target = request.headers['x-amz-target'];
    if (target === 'AmazonSQS.DeleteMessage' && this.chance.chance(this.behaviour.rate)) {
      this.strike('sqsRedelivery');
      void reply.status(200).header('content-type', 'application/x-amz-json-1.0').send('{}');
      return true;
    }
    if (target !== 'AmazonSQS.DeleteMessageBatch') return false;
    const body = jsonBody(request);
    if (!Array.isArray(body.Entries)) return false;
    const entries = body.Entries as { Id?: unknown }[];
    const kept = entries.filter(() => this.chance.chance(this.behaviour.rate));
    if (kept.length === 0) return false;
    for (let i = 0; i < kept.length; i++) this.strike('sqsRedelivery');
    const ids = kept.map((e) => String(e.Id));
    if (kept.length === entries.length) {
      void reply
        .status(200)
        .header('content-type', 'application/x-amz-json-1.0')
        .send(JSON.stringify({ Successful: ids.map((Id) => ({ Id })), Failed: [] }));
      return true;
    }
    body.Entries = entries.filter((e) => !kept.includes(e));
    this.keptBack.set(request, ids);
    return false;
  }

  /** The batch's answer names the entries kept back as deleted too. */
  onSend(request: FastifyRequest, payload: unknown): unknown {
    const ids = this.keptBack.get(request);
    if (ids === undefined || typeof payload !== 'string') return payload;
    try {
      const out = JSON.parse(payload) as { Successful?: { Id: string }[] };
      return JSON.stringify({ ...out, Successful: [...(out.Successful ?? []), ...ids.map((Id) => ({ Id }))] });
    } catch {
      return payload;
    }
  }
}
