import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DeleteMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { TaskQueue } from '../../../../lib/aws/queue';
import { z } from 'zod';
import { StateStore } from '../../../../lib/aws/state-store';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../../helpers/children';

const counter = z.strictObject({ n: z.number().int() });

/**
 * The faithful S3 on the wire, through the real SDK and its retries: every PUT is applied and
 * then loses its response (s3LostResponse at rate 1). A bare PutObject reports a failure for a
 * write that landed; the state store tells that its own write landed and goes on.
 */
describe('local cloud: writes applied, responses lost (child process)', () => {
  let cloud: LocalCloudInfo;
  const s3 = (): S3Client =>
    new S3Client({
      region: cloud.region,
      endpoint: cloud.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'node-1', secretAccessKey: 'x' },
    });
  const store = (): StateStore =>
    new StateStore(s3(), { bucket: cloud.bucket, prefix: 'lost/', maxObjectBytes: 1 << 20 });

  beforeAll(async () => {
    cloud = await startCloudProcess([
      '--behaviour',
      JSON.stringify({
        s3LostResponse: { rate: 1, resetShare: 0.5 },
        s3SlowDownBursts: false,
        s3ConditionalConflict: false,
      }),
    ]);
  });
  afterAll(() => killAll());

  it('applies a conditional PUT yet answers with an error: the SDK retry then meets its own write', async () => {
    const put = (): Promise<unknown> =>
      s3().send(
        new PutObjectCommand({ Bucket: cloud.bucket, Key: 'lost/raw.json', Body: '{"n":1}', IfNoneMatch: '*' }),
      );
    await expect(put()).rejects.toBeDefined();
    // The object is there all the same: a second create is refused as it exists.
    await expect(put()).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
  });

  it('takes its own landed create and CAS as done, not as lost, so each applies once', async () => {
    const s = store();
    await expect(s.create('c.json', { n: 1 })).resolves.toBeDefined();
    let applied = 0;
    const out = await s.update('c.json', counter, (cur) => {
      applied++;
      return { value: { n: (cur?.n ?? 0) + 1 }, result: null };
    });
    expect(out.written).toBe(true);
    expect(applied).toBe(1);
    expect((await s.read('c.json', counter))?.value.n).toBe(2);
  });
});

/** SQS at least once (sqsRedelivery at rate 1): a deleted message comes back once its visibility runs out. */
describe('local cloud: a deleted message delivered again (child process)', () => {
  let cloud: LocalCloudInfo;
  beforeAll(async () => {
    cloud = await startCloudProcess(['--behaviour', JSON.stringify({ sqsRedelivery: { rate: 1 } })]);
  });
  afterAll(() => killAll());

  it('answers DeleteMessage with success and still hands the message out again', async () => {
    const queue = new TaskQueue(
      new SQSClient({
        region: cloud.region,
        endpoint: cloud.endpoint,
        credentials: { accessKeyId: 'node-1', secretAccessKey: 'x' },
      }),
      cloud.queueUrl,
    );
    await queue.send('{"taskId":"t1","workSeconds":1}');
    const [first] = await queue.receive(1, 1, 1);
    if (first === undefined) throw new Error('nothing received');
    await expect(queue.delete(first.receiptHandle)).resolves.toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_200));
    const [again] = await queue.receive(1, 2, 1);
    expect(again?.id).toBe(first.id);
    expect(again?.receiveCount).toBe(2);
  });

  it('answers every entry of DeleteMessageBatch as deleted and still hands the messages out again', async () => {
    const sqs = new SQSClient({
      region: cloud.region,
      endpoint: cloud.endpoint,
      credentials: { accessKeyId: 'watchdog', secretAccessKey: 'x' },
    });
    const queue = new TaskQueue(sqs, cloud.queueUrl);
    await queue.send('{"taskId":"b1","workSeconds":1}');
    await queue.send('{"taskId":"b2","workSeconds":1}');
    // The previous case's message never goes (rate 1): only this case's two count.
    const mine = <M extends { body: string }>(ms: M[]): M[] => ms.filter((m) => m.body.includes('"b'));
    const got = mine(await queue.receive(10, 1, 1));
    expect(got).toHaveLength(2);
    const out = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: cloud.queueUrl,
        Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.receiptHandle })),
      }),
    );
    expect((out.Successful ?? []).map((e) => e.Id).sort()).toEqual(['0', '1']);
    await new Promise((r) => setTimeout(r, 1_200));
    const again = mine(await queue.receive(10, 2, 1));
    expect(again.map((m) => m.id).sort()).toEqual(got.map((m) => m.id).sort());
    sqs.destroy();
  });
});
