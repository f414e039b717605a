import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { SDK_EXPORTS, SDK_PACKAGES } from '../../lib/aws/sdk';
import { lambdaLikeDir, nodeModulesAbove } from '../../lib/deploy/lambda-dir';
import { bundleOf, buildSdkLayer, groupOf, LAYER_GROUPS } from '../../lib/deploy/sdk-layer';
import { FAITHFUL } from '../../lib/harness/localcloud/behaviour';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../helpers/children';

/**
 * The layer as Lambda sees it: its folder on NODE_PATH and no node_modules above the code, so
 * every package comes from the layer's bundles. Its clients are not just loadable: they sign,
 * send and parse real requests against the local cloud (all its unkind behaviours off: this is
 * about the layer's code, not about faults), including the conditional write the lease rests on.
 */
describe('the AWS SDK layer', () => {
  let dir: string;
  let layer: string;
  let cloud: LocalCloudInfo;

  beforeAll(async () => {
    dir = lambdaLikeDir('qf-sdk-layer-');
    layer = join(dir, 'opt');
    await buildSdkLayer(layer, build);
    cloud = await startCloudProcess([
      '--behaviour',
      JSON.stringify(Object.fromEntries(Object.keys(FAITHFUL).map((name) => [name, false]))),
    ]);
  }, 60_000);
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `script` in a fresh Node process that finds packages through the layer only. */
  const run = (script: string): unknown => {
    const file = join(dir, `script-${Math.random().toString(36).slice(2)}.js`);
    writeFileSync(
      file,
      `(async () => {\n${script}\n})().then((out) => process.stdout.write(JSON.stringify(out)), ` +
        `(err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });\n`,
    );
    const res = spawnSync(process.execPath, [file], {
      cwd: dir,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: join(layer, 'nodejs', 'node_modules'),
        AWS_REGION: cloud.region,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        CLOUD: JSON.stringify(cloud),
      },
      timeout: 30_000,
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    return JSON.parse(res.stdout);
  };
  const CLIENT =
    `const cloud = JSON.parse(process.env.CLOUD); ` +
    `const base = { region: cloud.region, endpoint: cloud.endpoint, ` +
    `credentials: { accessKeyId: 'harness', secretAccessKey: 'x' } };`;

  it('runs where nothing but the layer can supply a package', () => {
    expect(nodeModulesAbove(dir)).toBeNull();
    expect(run(`try { require('zod'); return 'found'; } catch { return 'missing'; }`)).toBe('missing');
  });

  it('puts every SDK package in exactly one group', () => {
    expect(Object.values(LAYER_GROUPS).flat().sort()).toEqual([...SDK_PACKAGES].sort());
    for (const pkg of SDK_PACKAGES) expect(LAYER_GROUPS[groupOf(pkg)]).toContain(pkg);
  });

  it('hands out exactly the names the fleet takes from each package, each defined', () => {
    const got = run(
      `return Object.fromEntries(${JSON.stringify(SDK_PACKAGES)}.map((p) => { const m = require(p); ` +
        `return [p, Object.keys(m).filter((k) => m[k] !== undefined).sort()]; }));`,
    );
    expect(got).toEqual(Object.fromEntries(SDK_PACKAGES.map((p) => [p, [...SDK_EXPORTS[p]].sort()])));
  });

  it('loads S3 and SQS from the every-run bundle alone, not the clients only an incident needs', () => {
    const got = run(
      `require('@aws-sdk/client-s3'); require('@aws-sdk/client-sqs'); ` +
        `return Object.keys(require.cache).flatMap((k) => k.split('node_modules/').slice(1));`,
    ) as string[];
    expect(got).toContain(`${bundleOf('every-run')}/index.js`);
    expect(got.filter((f) => f.startsWith('@queen-fleet/'))).toEqual([`${bundleOf('every-run')}/index.js`]);
  });

  it(
    'signs, sends and parses S3 requests: a create-only PUT, a GET, a LIST, a HEAD, ' +
      'and a second create refused with 412',
    () => {
      const got = run(
        `${CLIENT}
      const { S3Client, PutObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } = ` +
          `require('@aws-sdk/client-s3');
      const s3 = new S3Client({ ...base, forcePathStyle: true });
      const put = () => s3.send(new PutObjectCommand({ Bucket: cloud.bucket, Key: 'layer/a.json', ` +
          `Body: '{"n":1}', IfNoneMatch: '*' }));
      const first = await put();
      const body = await (await s3.send(new GetObjectCommand({ Bucket: cloud.bucket, Key: 'layer/a.json' }))).Body` +
          `.transformToString();
      const head = await s3.send(new HeadObjectCommand({ Bucket: cloud.bucket, Key: 'layer/a.json' }));
      const list = await s3.send(new ListObjectsV2Command({ Bucket: cloud.bucket, Prefix: 'layer/' }));
      const again = await put().then(() => 'written', (e) => e.$metadata.httpStatusCode);
      return { etag: first.ETag === head.ETag, body, keys: list.Contents.map((o) => o.Key), again };`,
      );
      expect(got).toEqual({ etag: true, body: '{"n":1}', keys: ['layer/a.json'], again: 412 });
    },
  );

  it('signs, sends and parses SQS and SNS requests', () => {
    const got = run(
      `${CLIENT}
      const { SQSClient, SendMessageCommand, ReceiveMessageCommand, ` +
        `DeleteMessageCommand, GetQueueAttributesCommand } = require('@aws-sdk/client-sqs');
      const { SNSClient, PublishCommand } = require('@aws-sdk/client-sns');
      const sqs = new SQSClient(base);
      await sqs.send(new SendMessageCommand({ QueueUrl: cloud.queueUrl, MessageBody: 'layer-task' }));
      const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: cloud.queueUrl, ` +
        `AttributeNames: ['ApproximateNumberOfMessages'] }));
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: cloud.queueUrl, ` +
        `MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
      const m = got.Messages[0];
      await sqs.send(new DeleteMessageCommand({ QueueUrl: cloud.queueUrl, ReceiptHandle: m.ReceiptHandle }));
      const published = await new SNSClient(base).send(new PublishCommand({ TopicArn: cloud.topicArn, ` +
        `Message: 'layer alert' }));
      return { depth: attrs.Attributes.ApproximateNumberOfMessages, body: m.Body, ` +
        `published: typeof published.MessageId };`,
    );
    expect(got).toEqual({ depth: '1', body: 'layer-task', published: 'string' });
  });
});
