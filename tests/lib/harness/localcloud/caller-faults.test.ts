import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { killAll, startControlledCloud, type ControlledCloud } from '../../../helpers/children';

/** Faults the local cloud's front door applies to one caller: a blackhole, an s3-outage aimed at one node. */
afterAll(() => killAll());

interface Answer {
  status: number | null;
  body: string;
  error: string | null;
}

const authOf = (principal: string): string =>
  `AWS4-HMAC-SHA256 Credential=${principal}/20260101/us-west-2/s3/aws4_request, SignedHeaders=host, Signature=0`;
const SQS = (action: string): Record<string, string> => ({
  'content-type': 'application/x-amz-json-1.0',
  'x-amz-target': `AmazonSQS.${action}`,
});

/** One request as `principal`; a client that gives up after `giveUpMs` destroys its socket. */
const send = (
  cloud: ControlledCloud,
  principal: string,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; giveUpMs?: number } = {},
): Promise<Answer> =>
  new Promise((resolve) => {
    const url = new URL(path, cloud.endpoint);
    const req = httpRequest(
      url,
      { method, agent: false, headers: { authorization: authOf(principal), ...options.headers } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? null, body, error: null }));
      },
    );
    req.on('error', (error) => resolve({ status: null, body: '', error: error.message }));
    if (options.giveUpMs !== undefined) setTimeout(() => req.destroy(new Error('gave up')), options.giveUpMs);
    req.end(options.body);
  });

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('a blackholed caller', () => {
  let cloud: ControlledCloud;
  beforeAll(async () => {
    cloud = await startControlledCloud();
  });

  it('gets no answer, no reset; what it sent lands when the fault clears, even if it gave up', async () => {
    await cloud.control({ op: 'blackhole', node: 'node-1', on: true });
    // A raw connection: the request goes out, and nothing comes back, not even a close.
    const socket = connect(Number(new URL(cloud.endpoint).port), '127.0.0.1');
    let received = '';
    let closed = false;
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('close', () => (closed = true));
    const body = '{"n":1}';
    socket.write(
      `PUT /${cloud.bucket}/held/a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authOf('node-1')}\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    const gaveUp = await send(cloud, 'node-1', 'PUT', `/${cloud.bucket}/held/b.json`, {
      body: '{"n":2}',
      giveUpMs: 300,
    });
    expect(gaveUp.error).toBe('gave up');
    // Another node is not touched: it sees neither write yet.
    expect((await send(cloud, 'node-2', 'GET', `/${cloud.bucket}/held/a.json`)).status).toBe(404);
    await sleep(300);
    expect({ received, closed }).toEqual({ received: '', closed: false });
    expect((await cloud.control({ op: 'held' })).held).toBe(2);

    await cloud.control({ op: 'blackhole', node: 'node-1', on: false });
    for (let i = 0; i < 50 && !received.includes('\r\n\r\n'); i++) await sleep(20);
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
    // The write whose client gave up landed too: delayed packets, finally delivered.
    expect((await send(cloud, 'drill', 'GET', `/${cloud.bucket}/held/b.json`)).body).toBe('{"n":2}');
    expect((await send(cloud, 'drill', 'GET', `/${cloud.bucket}/held/a.json`)).body).toBe('{"n":1}');
    // Each write is announced once (a drill counts completions so), held or not.
    expect((await send(cloud, 'node-2', 'PUT', `/${cloud.bucket}/held/c.json`, { body: '{}' })).status).toBe(200);
    for (const key of ['held/a.json', 'held/b.json', 'held/c.json'])
      expect([key, (await cloud.control({ op: 'observed', key })).observed]).toEqual([key, 1]);
  });

  it('gets the answer to a request that arrived before the fault only once it clears', async () => {
    const poll = send(cloud, 'node-1', 'POST', '/', {
      headers: SQS('ReceiveMessage'),
      body: JSON.stringify({ QueueUrl: cloud.queueUrl, WaitTimeSeconds: 1 }),
    });
    let answered = false;
    void poll.then(() => (answered = true));
    await sleep(200);
    await cloud.control({ op: 'blackhole', node: 'node-1', on: true });
    // The long poll ended after 1 s; its answer waits.
    await sleep(1_500);
    expect(answered).toBe(false);
    await cloud.control({ op: 'blackhole', node: 'node-1', on: false });
    expect((await poll).status).toBe(200);
  });

  it('is dropped when the cloud stops, at once: nothing keeps it waiting', async () => {
    await cloud.control({ op: 'blackhole', node: 'node-1', on: true });
    const held = send(cloud, 'node-1', 'GET', `/${cloud.bucket}/held/a.json`);
    await sleep(100);
    const { stoppedMs } = (await cloud.control({ op: 'stop' })) as { stoppedMs: number };
    expect(stoppedMs).toBeLessThan(2_000);
    expect((await held).status).toBeNull();
  });
});

describe('an s3-outage aimed at one node', () => {
  it('fails its S3 requests with 503 ServiceUnavailable, while its SQS and the other nodes work', async () => {
    const cloud = await startControlledCloud();
    await cloud.control({ op: 's3-outage', node: 'node-1', on: true });
    const refused = await send(cloud, 'node-1', 'GET', `/${cloud.bucket}/x.json`);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('<Code>ServiceUnavailable</Code>');
    expect((await send(cloud, 'node-1', 'POST', '/', { headers: SQS('ListQueues'), body: '{}' })).status).toBe(200);
    expect((await send(cloud, 'node-2', 'GET', `/${cloud.bucket}/x.json`)).status).toBe(404);
    await cloud.control({ op: 's3-outage', node: 'node-1', on: false });
    expect((await send(cloud, 'node-1', 'GET', `/${cloud.bucket}/x.json`)).status).toBe(404);
  });
});

describe('a caller on a slow path', () => {
  let cloud: ControlledCloud;
  beforeAll(async () => {
    cloud = await startControlledCloud();
  });

  it('has its request applied when it arrives, even after it gave up waiting (a late write lands)', async () => {
    await cloud.control({ op: 'latency', node: 'node-1', ms: 300 });
    const gaveUp = await send(cloud, 'node-1', 'PUT', `/${cloud.bucket}/late/a.json`, {
      body: '{"n":1}',
      giveUpMs: 50,
    });
    expect(gaveUp.error).toBe('gave up');
    await sleep(500);
    await cloud.control({ op: 'latency', node: 'node-1', ms: 0 });
    expect((await send(cloud, 'drill', 'GET', `/${cloud.bucket}/late/a.json`)).body).toBe('{"n":1}');
  });
});
