import { GetInstancesCommand, LightsailClient } from '@aws-sdk/client-lightsail';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { z } from 'zod';
import { SQSClient } from '@aws-sdk/client-sqs';
import { IntakeQueue } from '../../../../lib/aws/intake';
import { TaskQueue } from '../../../../lib/aws/queue';
import { RunCommand } from '../../../../lib/aws/run-command';
import { StateStore } from '../../../../lib/aws/state-store';
import { ConcurrentWriteError, ConflictError, FleetError, NotFoundError } from '../../../../lib/core/errors';
import { FAITHFUL } from '../../../../lib/harness/localcloud/behaviour';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../../helpers/children';

const counter = z.strictObject({ n: z.number().int(), writers: z.array(z.number()) });

describe('local cloud (child process)', () => {
  let cloud: LocalCloudInfo;
  const clientOptions = (): {
    region: string;
    endpoint: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  } => ({
    region: cloud.region,
    endpoint: cloud.endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const store = (): StateStore =>
    new StateStore(new S3Client({ ...clientOptions(), forcePathStyle: true }), {
      bucket: cloud.bucket,
      prefix: 'peer-sync/',
      maxObjectBytes: 1 << 20,
    });

  beforeAll(async () => {
    cloud = await startCloudProcess();
  });
  afterAll(() => killAll());

  it('starts in under 2 s on 127.0.0.1', () => {
    expect(cloud.startMs).toBeLessThan(2000);
    expect(cloud.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("lists with S3's clock and Last-Modified times, so ages never use this machine's clock", async () => {
    await store().put('clock/a.json', { n: 1 });
    const { entries, serverNow } = await store().listWithClock('clock/');
    expect(serverNow).not.toBeNull();
    expect(entries.map((e) => e.key)).toEqual(['clock/a.json']);
    // Both from the server: the object was written before the listing (Date has whole seconds).
    expect((serverNow ?? 0) - (entries[0]?.lastModified ?? Infinity)).toBeGreaterThan(-1000);
    expect(Math.abs((serverNow ?? 0) - Date.now())).toBeLessThan(5_000);
  });

  it('loses no update when 20 writers increment one counter by CAS', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store().update('cas/counter.json', counter, (cur) => ({
          value: { n: (cur?.n ?? 0) + 1, writers: [...(cur?.writers ?? []), i] },
          result: null,
        })),
      ),
    );
    const final = await store().read('cas/counter.json', counter);
    expect(final?.value.n).toBe(20);
    expect(new Set(final?.value.writers).size).toBe(20);
  });

  it('lets exactly one of 10 concurrent creates win; the others are refused (412) or told to retry (409)', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => store().create('cas/once.json', { n: i, writers: [] })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => r.reason instanceof ConflictError || r.reason instanceof ConcurrentWriteError),
    ).toBe(true);
  });

  it('refuses a replace against a stale ETag (412, once no other write to the key is recent)', async () => {
    const s = store();
    const etag = await s.create('cas/stale.json', { n: 1, writers: [] });
    await s.replace('cas/stale.json', { n: 2, writers: [] }, etag);
    // Within s3ConditionalConflict's window of the write above, S3 may answer 409 instead (the
    // store retries it, and its retries can all fall inside the window: CI saw it once). Past
    // it, only 412 can come back.
    await new Promise((resolve) => setTimeout(resolve, FAITHFUL.s3ConditionalConflict.windowMs + 50));
    await expect(s.replace('cas/stale.json', { n: 3, writers: [] }, etag)).rejects.toBeInstanceOf(ConflictError);
  });

  it('answers SSM Run Command and Lightsail calls on the wire', async () => {
    const run = new RunCommand(new SSMClient(clientOptions()));
    const node1 = { name: 'node-1', instanceId: 'mi-00000000000000001' };
    await expect(run.result('no-such-command', node1)).rejects.toBeInstanceOf(NotFoundError);
    // No fleet is attached to a bare local cloud: the instance is unknown.
    await expect(run.send(node1, 'restartWorker', 'test')).rejects.toBeInstanceOf(FleetError);
    const out = await new LightsailClient(clientOptions()).send(new GetInstancesCommand({}));
    expect(out.instances).toEqual([]);
  });

  it(
    'serves admission: what producers sent to intake moves to the task ' +
      'queue up to the count asked, each message once, the rest waiting',
    async () => {
      const sqs = new SQSClient(clientOptions());
      const producer = new TaskQueue(sqs, cloud.intakeUrl);
      const bodies = Array.from({ length: 25 }, (_, i) => JSON.stringify({ taskId: `t-${i}` }));
      for (const b of bodies) await producer.send(b);
      const intake = new IntakeQueue(sqs, cloud.intakeUrl, cloud.queueUrl);
      expect(await intake.depths()).toEqual({ backlog: 0, intake: 25 });
      expect(await intake.admit(12)).toBe(12);
      expect(await intake.depths()).toEqual({ backlog: 12, intake: 13 });
      expect(await intake.admit(100)).toBe(13);
      const tasks = new TaskQueue(sqs, cloud.queueUrl);
      const got: string[] = [];
      for (let i = 0; i < 5 && got.length < 25; i++) got.push(...(await tasks.receive(10, 0, 30)).map((m) => m.body));
      expect(got.sort()).toEqual([...bodies].sort());
      expect(await intake.depths()).toEqual({ backlog: 25, intake: 0 });
      sqs.destroy();
    },
  );

  it('carries bodies up to 1 MiB from intake to a stage untouched, and the failure count beside them', async () => {
    const sqs = new SQSClient(clientOptions());
    const producer = new TaskQueue(sqs, cloud.intakeUrl);
    // Four bodies of about 700 KB: no batch of them fits SQS's 1 MiB batch limit together.
    const bodies = Array.from({ length: 4 }, (_, i) =>
      JSON.stringify({ taskId: `big-${i}`, payload: { shots: 'é'.repeat(350_000 - i) } }),
    );
    for (const b of bodies) await producer.send(b);
    expect(await new IntakeQueue(sqs, cloud.intakeUrl, cloud.queueUrl).admit(10)).toBe(4);
    const tasks = new TaskQueue(sqs, cloud.queueUrl);
    const got: string[] = [];
    for (let i = 0; i < 5 && got.length < 4; i++) got.push(...(await tasks.receive(10, 0, 30)).map((m) => m.body));
    expect(got.sort()).toEqual([...bodies].sort());
    await tasks.send(bodies[0] ?? '', 2);
    const [again] = await tasks.receive(1, 1, 30);
    expect(again).toMatchObject({ body: bodies[0], failures: 2 });
    sqs.destroy();
  });

  it('stops cleanly on SIGTERM', async () => {
    const exit = new Promise<number | null>((resolve) => cloud.child.once('exit', resolve));
    cloud.child.kill('SIGTERM');
    await expect(exit).resolves.toBe(0);
  });
});
