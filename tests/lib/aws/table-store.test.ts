import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { StateStore } from '../../../lib/aws/state-store';
import { BODY_LIMIT, TableStore } from '../../../lib/aws/table-store';
import type { CorruptObjectError } from '../../../lib/core/errors';
import { ConflictError, OversizedError } from '../../../lib/core/errors';
import { HARNESS_PRINCIPAL } from '../../../lib/harness/localcloud/aws-wire';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../helpers/children';

const counter = z.strictObject({ n: z.number().int(), writers: z.array(z.number()) });
const noPause = { sleep: (): Promise<void> => new Promise((r) => setImmediate(r)), random: Math.random };

const clientsOf = (cloud: LocalCloudInfo, principal: string): { dynamodb: DynamoDBClient; s3: S3Client } => {
  const options = {
    region: cloud.region,
    endpoint: cloud.endpoint,
    credentials: { accessKeyId: principal, secretAccessKey: 'test' },
    maxAttempts: 1,
  };
  return { dynamodb: new DynamoDBClient(options), s3: new S3Client({ ...options, forcePathStyle: true }) };
};

const tableStore = (cloud: LocalCloudInfo, principal = 'node-1', attempts = 6): TableStore =>
  new TableStore(clientsOf(cloud, principal).dynamodb, {
    table: cloud.table,
    maxObjectBytes: 4096,
    requestRetry: { attempts, baseMs: 5, capMs: 50 },
    deps: noPause,
  });

/** Writes an item as the harness would (never faulted), bypassing the store. */
const putRaw = (cloud: LocalCloudInfo, item: Record<string, { S: string } | { N: string }>): Promise<unknown> =>
  clientsOf(cloud, HARNESS_PRINCIPAL).dynamodb.send(new PutItemCommand({ TableName: cloud.table, Item: item }));

afterAll(() => killAll());

describe('TableStore on the local DynamoDB, every behaviour off', () => {
  let cloud: LocalCloudInfo;
  beforeAll(async () => {
    cloud = await startCloudProcess(['--kind']);
  });

  it('creates once, replaces only the version it read, and counts the versions', async () => {
    const s = tableStore(cloud);
    expect(await s.create('a', { n: 1, writers: [] })).toBe('1');
    await expect(s.create('a', { n: 2, writers: [] })).rejects.toBeInstanceOf(ConflictError);
    expect(await s.replace('a', { n: 2, writers: [] }, '1')).toBe('2');
    await expect(s.replace('a', { n: 3, writers: [] }, '1')).rejects.toBeInstanceOf(ConflictError);
    expect(await s.put('a', { n: 4, writers: [] })).toBe('3');
    expect(await s.read('a', counter)).toEqual({ value: { n: 4, writers: [] }, etag: '3' });
    expect(await s.readIfChanged('a', counter, '3')).toEqual({ changed: false });
    expect(await s.readIfChanged('missing', counter, null)).toBeNull();
    expect(s.counts.writeUnits).toBeGreaterThan(0);
    expect(s.counts.readUnits).toBeGreaterThan(0);
  });

  it(
    'reads a damaged item as CorruptObjectError with its version, ' + 'and an update replaces exactly that version',
    async () => {
      await putRaw(cloud, { k: { S: 'damaged' }, body: { S: '{"n": 1, "wri' }, v: { N: '7' } });
      const s = tableStore(cloud);
      await expect(s.read('damaged', counter)).rejects.toMatchObject({ etag: '7', key: `${cloud.table}/damaged` });
      const seen: CorruptObjectError[] = [];
      await s.update(
        'damaged',
        counter,
        () => ({ value: { n: 1, writers: [] }, result: null }),
        (e) => {
          seen.push(e);
          return Promise.resolve();
        },
      );
      expect(seen).toHaveLength(1);
      expect(await s.read('damaged', counter)).toEqual({ value: { n: 1, writers: [] }, etag: '8' });
    },
  );

  it(
    'takes an item without a version (written by hand) ' + 'as version "", replaceable only while it has none',
    async () => {
      await putRaw(cloud, { k: { S: 'by-hand' }, body: { S: '{"n":5,"writers":[]}' } });
      const s = tableStore(cloud);
      expect(await s.read('by-hand', counter)).toEqual({ value: { n: 5, writers: [] }, etag: '' });
      expect(await s.replace('by-hand', { n: 6, writers: [] }, '')).toBe('1');
      await expect(s.replace('by-hand', { n: 7, writers: [] }, '')).rejects.toBeInstanceOf(ConflictError);
    },
  );

  it('refuses bodies over the limit, read or written', async () => {
    await putRaw(cloud, { k: { S: 'big' }, body: { S: 'x'.repeat(5000) }, v: { N: '1' } });
    const s = tableStore(cloud);
    await expect(s.read('big', counter)).rejects.toBeInstanceOf(OversizedError);
    await expect(s.put('big2', { n: 1, writers: Array.from({ length: 2000 }, (_, i) => i) })).rejects.toBeInstanceOf(
      OversizedError,
    );
  });

  it(
    'never sends a body DynamoDB would refuse, ' + 'whatever the configured limit (an item is at most 400 KB)',
    async () => {
      const s = new TableStore(clientsOf(cloud, 'node-1').dynamodb, {
        table: cloud.table,
        maxObjectBytes: 1024 * 1024,
        requestRetry: { attempts: 1, baseMs: 5, capMs: 50 },
        deps: noPause,
      });
      const writers = (bytes: number): number[] => Array.from({ length: Math.ceil(bytes / 7) }, () => 999999);
      await expect(s.put('near-limit', { n: 1, writers: writers(BODY_LIMIT - 64) })).resolves.toBe('1');
      await expect(s.put('over-limit', { n: 1, writers: writers(BODY_LIMIT + 64) })).rejects.toBeInstanceOf(
        OversizedError,
      );
      expect(await s.readText('over-limit')).toBeNull();
    },
  );

  it('lets a StateStore keep the keys it is told of in the table and every other key in the bucket', async () => {
    const { s3 } = clientsOf(cloud, 'node-1');
    const table = tableStore(cloud);
    const store = new StateStore(s3, {
      bucket: cloud.bucket,
      prefix: 'peer-sync/',
      maxObjectBytes: 4096,
      records: { owns: (k) => k === 'leader.json', store: table },
    });
    await store.create('leader.json', { n: 1, writers: [] });
    await store.create('other.json', { n: 2, writers: [] });
    expect((await table.read('leader.json', counter))?.value.n).toBe(1);
    expect(await table.read('other.json', counter)).toBeNull();
    expect(store.counts.PUT).toBe(1);
    await store.update('leader.json', counter, (cur) => ({
      value: { n: (cur?.n ?? 0) + 1, writers: [] },
      result: null,
    }));
    expect(await store.read('leader.json', counter)).toEqual({ value: { n: 2, writers: [] }, etag: '2' });
  });

  it('carries a lease written to the bucket before the upgrade into the table once, with its epoch', async () => {
    const { s3 } = clientsOf(cloud, 'node-1');
    const legacy = new StateStore(s3, { bucket: cloud.bucket, prefix: 'legacy/', maxObjectBytes: 4096 });
    await legacy.create('moved.json', { n: 41, writers: [1] });
    const table = tableStore(cloud);
    const routed = (): StateStore =>
      new StateStore(s3, {
        bucket: cloud.bucket,
        prefix: 'legacy/',
        maxObjectBytes: 4096,
        records: { owns: (k) => k === 'moved.json', store: table },
      });
    const [a, b] = await Promise.all([
      routed().read('moved.json', counter),
      routed().readIfChanged('moved.json', counter, null),
    ]);
    expect(a).toEqual({ value: { n: 41, writers: [1] }, etag: '1' });
    expect(b).toEqual({ changed: true, value: { n: 41, writers: [1] }, etag: '1' });
    // Created once: the second reader met the first one's item, and the next write is its version 2.
    expect(await routed().replace('moved.json', { n: 42, writers: [1] }, '1')).toBe('2');
    expect((await routed().read('moved.json', counter))?.value.n).toBe(42);
  });
});

describe('TableStore on the local DynamoDB, unkind', () => {
  let cloud: LocalCloudInfo;
  beforeAll(async () => {
    // Every write loses its response (half reset, half 500), and most requests meet throttling.
    cloud = await startCloudProcess([
      '--behaviour',
      JSON.stringify({
        dynamoLostResponse: { rate: 1 },
        dynamoThrottleBursts: { meanGapMs: 20, burstMs: 1_000, rate: 0.3 },
      }),
    ]);
  });

  it(
    'knows its own writes when every response is lost: ' + 'a create and a replace resolve to the versions they wrote',
    async () => {
      const s = tableStore(cloud, 'node-1', 40);
      expect(await s.create('lost', { n: 1, writers: [] })).toBe('1');
      expect(await s.replace('lost', { n: 2, writers: [] }, '1')).toBe('2');
      expect(await s.put('lost', { n: 3, writers: [] })).toBe('3');
      expect(await s.read('lost', counter)).toEqual({ value: { n: 3, writers: [] }, etag: '3' });
    },
  );

  it('loses no update and applies none twice when 8 writers increment one counter by CAS', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        tableStore(cloud, `node-${i}`, 40).update('cas', counter, (cur) => ({
          value: { n: (cur?.n ?? 0) + 1, writers: [...(cur?.writers ?? []), i] },
          result: null,
        })),
      ),
    );
    const final = await tableStore(cloud, 'reader', 40).read('cas', counter);
    expect(final?.value.n).toBe(8);
    expect([...(final?.value.writers ?? [])].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('serves eventually consistent reads stale for a second after a write; the store reads consistently', async () => {
    const s = tableStore(cloud, 'node-1', 40);
    await s.put('stale', { n: 1, writers: [] });
    await new Promise((r) => setTimeout(r, 1_100));
    await s.put('stale', { n: 2, writers: [] });
    const eventual = await clientsOf(cloud, HARNESS_PRINCIPAL).dynamodb.send(
      new GetItemCommand({ TableName: cloud.table, Key: { k: { S: 'stale' } } }),
    );
    expect(JSON.parse(eventual.Item?.body && 'S' in eventual.Item.body ? (eventual.Item.body.S ?? '') : '')).toEqual({
      n: 1,
      writers: [],
    });
    expect((await s.read('stale', counter))?.value.n).toBe(2);
  });
});
