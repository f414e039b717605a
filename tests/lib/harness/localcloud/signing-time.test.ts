import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { ClientFactory } from '../../../../lib/aws/clients';
import { TaskQueue } from '../../../../lib/aws/queue';
import { stateStoreFor } from '../../../../lib/aws/stores';
import { KEYS } from '../../../../lib/core/keys';
import { leaderSchema } from '../../../../lib/core/schemas';
import { nextEpoch } from '../../../../lib/core/fleet/lease';
import { FAITHFUL } from '../../../../lib/harness/localcloud/behaviour';
import { amzDate, RESOLUTION_MS, signedWithin, skewOf } from '../../../../lib/harness/localcloud/signing-time';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../../helpers/children';

/** The signatureTime behaviour: a request signed too far from the cloud's clock is refused as AWS does. */
let cloud: LocalCloudInfo;
beforeAll(async () => {
  // Its own process (the test transform cannot load fauxqs), with the true clock while this one's may be moved.
  const only = Object.fromEntries(Object.keys(FAITHFUL).map((name) => [name, name === 'signatureTime']));
  cloud = await startCloudProcess(['--behaviour', JSON.stringify(only)]);
});
afterAll(() => killAll());

const MINUTE = 60_000;
const auth = (day: string): string =>
  `AWS4-HMAC-SHA256 Credential=node-1/${day}/us-west-2/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=0`;

describe('signing times', () => {
  it('reads x-amz-date to the second, else the day of the credential scope', () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5);
    expect(amzDate(at)).toBe('20260102T030405Z');
    expect(signedWithin({ 'x-amz-date': '20260102T030405Z', authorization: auth('20250101') })).toEqual([at, at + 999]);
    expect(signedWithin({ authorization: auth('20260102') })).toEqual([Date.UTC(2026, 0, 2), Date.UTC(2026, 0, 3) - 1]);
    expect(signedWithin({})).toBeNull();
  });

  it('allows the window and the whole seconds either way, and no more', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    const signed = (ms: number): [number, number] => [ms, ms + 999];
    expect(skewOf(signed(now - 5 * MINUTE - RESOLUTION_MS + 1000), now, 5 * MINUTE)).toBeNull();
    expect(skewOf(signed(now - 5 * MINUTE - RESOLUTION_MS - 1000), now, 5 * MINUTE)).toBe('expired');
    expect(skewOf(signed(now + 5 * MINUTE + RESOLUTION_MS), now, 5 * MINUTE)).toBeNull();
    expect(skewOf(signed(now + 5 * MINUTE + RESOLUTION_MS + 1), now, 5 * MINUTE)).toBe('future');
    // A day-only scope is off only when the whole day is.
    expect(skewOf([Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 2) - 1], now, 5 * MINUTE)).toBeNull();
  });
});

describe('the front door, signing time checked against its own clock', () => {
  const send = (
    path: string,
    signedAt: number,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<Response> =>
    fetch(`${cloud.endpoint}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-amz-date': amzDate(signedAt), authorization: auth(amzDate(signedAt).slice(0, 8)), ...headers },
      body,
    });

  it('answers S3 403 RequestTimeTooSkewed past 15 minutes, with the true time to correct from', async () => {
    expect((await send(`/${cloud.bucket}/none.json`, Date.now() + 14 * MINUTE)).status).toBe(404);
    const res = await send(`/${cloud.bucket}/none.json`, Date.now() + 20 * MINUTE);
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain('<Code>RequestTimeTooSkewed</Code>');
    expect(text).toContain('<MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds>');
    expect(Math.abs(Date.parse(res.headers.get('date') ?? '') - Date.now())).toBeLessThan(2_000);
  });

  it('answers the JSON services 400 InvalidSignatureException past 5 minutes, either way', async () => {
    const sqs = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' };
    const late = await send('/', Date.now() - 6 * MINUTE, sqs, '{}');
    expect(late.status).toBe(400);
    expect(late.headers.get('x-amzn-errortype')).toBe('InvalidSignatureException');
    expect(((await late.json()) as { message: string }).message).toMatch(
      /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$/,
    );
    const early = await send(
      '/',
      Date.now() + 6 * MINUTE,
      { ...sqs, 'x-amz-target': 'DynamoDB_20120810.ListTables' },
      '{}',
    );
    expect(early.status).toBe(400);
    expect(((await early.json()) as { message: string }).message).toMatch(
      /^Signature not yet current: .* is still later than /,
    );
    expect(early.headers.get('date')).not.toBeNull();
    expect((await send('/', Date.now() - 4 * MINUTE, sqs, '{}')).status).toBe(200);
  });

  it('answers Route 53 403 SignatureDoesNotMatch', async () => {
    const res = await send('/2013-04-01/hostedzone', Date.now() + 6 * MINUTE);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code><Message>Signature not yet current');
  });
});

describe('a client whose process clock is 20 minutes off', () => {
  afterEach(() => jest.restoreAllMocks());

  it('gets through to S3 (the state store retries), DynamoDB and SQS once the SDK corrected its offset', async () => {
    const now = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => now() + 20 * MINUTE);
    const clients = new ClientFactory({
      region: cloud.region,
      endpoint: cloud.endpoint,
      credentials: { accessKeyId: 'node-1', secretAccessKey: 'local' },
    });
    try {
      const config = {
        bucket: cloud.bucket,
        table: cloud.table,
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
        retryCapSeconds: 1,
      };
      const store = stateStoreFor(config, clients);
      await store.put('skew/a.json', { n: 1 });
      expect((await store.read('skew/a.json', z.object({ n: z.number() })))?.value).toEqual({ n: 1 });
      // The first PUT was refused (403) and sent again by the store, signed anew.
      expect(store.counts.PUT).toBe(2);
      // The lease lives in DynamoDB (its client, too, makes one attempt: the table store retries).
      await store.create(KEYS.leader, nextEpoch(null, 'node-1', 'test', 'test', 'immediate'));
      expect((await store.read(KEYS.leader, leaderSchema))?.value.primary).toBe('node-1');
      const sent = await clients.sqs().send(new SendMessageCommand({ QueueUrl: cloud.queueUrl, MessageBody: '{}' }));
      // SQS's standard retries: the first attempt refused, the second signed with the corrected clock.
      expect(sent.$metadata.attempts).toBe(2);
      expect(await new TaskQueue(clients.sqs(), cloud.queueUrl).receive(1, 0, 30)).toHaveLength(1);
      const offset = (clients.s3().config as unknown as { systemClockOffset: number }).systemClockOffset;
      expect(Math.abs(offset + 20 * MINUTE)).toBeLessThan(3_000);
    } finally {
      clients.destroy();
    }
  }, 30_000);
});
