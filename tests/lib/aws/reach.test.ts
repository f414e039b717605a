import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ClientFactory } from '../../../lib/aws/clients';
import { outcomeOf, Reach } from '../../../lib/aws/reach';

/** A local endpoint that answers every request with `status` after `delayMs` (or never, for `null`). */
const serve = async (
  answer: () => { status: number; delayMs: number } | null,
): Promise<{ server: Server; endpoint: string }> => {
  const server = createServer((req, res) => {
    req.resume();
    const a = answer();
    if (a === null) return;
    setTimeout(() => {
      res.writeHead(a.status, { 'content-type': 'application/xml' });
      res.end(
        `<Error><Code>${a.status === 404 ? 'NoSuchKey' : 'ServiceUnavailable'}</Code><Message>m</Message></Error>`,
      );
    }, a.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const factory = (endpoint: string, reach: Reach, requestMs = 5_000): ClientFactory =>
  new ClientFactory(
    {
      region: 'us-west-2',
      endpoint,
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
      maxAttempts: 1,
      reach,
      timeouts: { connectionMs: 1_000, requestMs },
    },
    {},
  );

describe('Reach', () => {
  it('counts a store unreachable from its first unanswered request until the next answer, by its clock', () => {
    let t = 0;
    const reach = new Reach(() => t);
    reach.record('s3', 'failed');
    t = 5_000;
    reach.record('s3', 'failed');
    reach.record('sqs', 'neither');
    expect(reach.unreachable()).toEqual(['s3']);
    expect(reach.downFor('s3')).toBe(5_000);
    reach.record('s3', 'answered');
    expect(reach.unreachable()).toEqual([]);
    expect(reach.downFor('s3')).toBe(0);
  });

  it.each([
    [
      'a refusal (404, 412, a skewed signature): the store answered',
      { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } },
      'answered',
    ],
    [
      'a 503 or throttling: no answer to the request',
      { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } },
      'failed',
    ],
    [
      'a reset or a timeout: nothing reached it',
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      'failed',
    ],
    [
      'an abort this process asked for: says nothing',
      Object.assign(new Error('aborted'), { name: 'AbortError' }),
      'neither',
    ],
  ])('reads %s', (_, error, outcome) => {
    expect(outcomeOf(error)).toBe(outcome);
  });

  describe('through the clients of a ClientFactory', () => {
    let server: Server | undefined;
    afterEach(() => server?.close());

    it('is told the outcome of every S3 and SQS request', async () => {
      let status = 503;
      const served = await serve(() => ({ status, delayMs: 0 }));
      server = served.server;
      const reach = new Reach(Date.now);
      const clients = factory(served.endpoint, reach);
      await expect(clients.s3().send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow();
      expect(reach.unreachable()).toEqual(['s3']);
      status = 404;
      await expect(clients.s3().send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow();
      expect(reach.unreachable()).toEqual([]);
      await expect(
        clients.sqs().send(new GetQueueAttributesCommand({ QueueUrl: `${served.endpoint}/q` })),
      ).rejects.toThrow();
      clients.destroy();
    });

    it(
      'abandons a request no answer comes to within the request ' +
        'timeout (a blackholed path), and counts the store unreachable',
      async () => {
        const served = await serve(() => null);
        server = served.server;
        const reach = new Reach(Date.now);
        const clients = factory(served.endpoint, reach, 300);
        const started = Date.now();
        await expect(clients.s3().send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(reach.unreachable()).toEqual(['s3']);
        clients.destroy();
        server.closeAllConnections();
      },
    );
  });
});
