import type { FastifyReply, FastifyRequest } from 'fastify';

const INVOKE = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/**
 * Wire-level fake of Lambda's Invoke (restJson1), for the agents' direct, asynchronous
 * invocations of the watchdog: `InvocationType: Event` is queued and answered 202 at once, as
 * Lambda does; what happens to the event then (queue delay, retries, duplicates) is the
 * scheduler's (docs/aws-behaviour.md: lambdaAsync).
 */
export class LambdaFake {
  /** Called with each accepted event: the function name (or ARN) and the payload as sent. */
  onInvoke: ((functionName: string, payload: unknown) => void) | undefined;
  invocations = 0;

  handles(request: FastifyRequest): boolean {
    return request.method === 'POST' && INVOKE.test(request.url.split('?')[0] ?? '');
  }

  handle(request: FastifyRequest, reply: FastifyReply): void {
    const name = decodeURIComponent(INVOKE.exec(request.url.split('?')[0] ?? '')?.[1] ?? '');
    const type = String(request.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    const error = (status: number, code: string, message: string): void => {
      void reply
        .status(status)
        .header('content-type', 'application/json')
        .header('x-amzn-errortype', code)
        .send(JSON.stringify({ Type: 'User', message }));
    };
    if (type !== 'Event')
      return error(
        400,
        'InvalidParameterValueException',
        `the local Lambda fake only queues InvocationType Event, not ${type}`,
      );
    const body: unknown = request.body;
    const text = Buffer.isBuffer(body)
      ? body.toString('utf8')
      : typeof body === 'string'
        ? body
        : JSON.stringify(body ?? {});
    let payload: unknown;
    try {
      payload = text === '' ? {} : (JSON.parse(text) as unknown);
    } catch {
      return error(400, 'InvalidRequestContentException', 'Could not parse request body into json');
    }
    this.invocations++;
    this.onInvoke?.(name, payload);
    void reply.status(202).header('content-type', 'application/json').send('');
  }
}
