import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import pino from 'pino';
import { PeerSync } from '../../agent/peer-sync';
import { ConflictError } from '../../lib/core/errors';
import { StateStore } from '../../lib/aws/state-store';
import { bucketOf, hashTasks, mergeTasks, type TaskEntry, type TaskMap } from '../../lib/core/sync/manifest';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../helpers/children';

const entry = (over: Partial<TaskEntry> = {}): TaskEntry => ({
  status: 'running',
  stages: 1,
  progress: 3,
  epoch: 1,
  done: null,
  ...over,
});

describe('PeerSync on the local cloud', () => {
  let cloud: LocalCloudInfo;
  let prefix = 0;
  const s3 = (): S3Client =>
    new S3Client({
      region: cloud.region,
      endpoint: cloud.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  const store = (p: string): StateStore =>
    new StateStore(s3(), { bucket: cloud.bucket, prefix: p, maxObjectBytes: 1 << 20 });
  const DAY = 86_400_000;
  const node = (p: string, tasks: { current: TaskMap }, corrupt: string[] = [], now = 10_000): PeerSync =>
    new PeerSync({
      store: store(p),
      log: pino({ level: 'silent' }),
      localChanges: () => Promise.resolve(tasks.current),
      onCorrupt: (key) => corrupt.push(key),
      now: () => now,
      retentionMs: 7 * DAY,
    });
  const fresh = (): string => `ps${++prefix}/`;

  beforeAll(async () => {
    cloud = await startCloudProcess();
  });
  afterAll(() => killAll());

  it('keeps the changes it was handed when a round fails, and pushes them with the next', async () => {
    // The worker's journal hands each change over once: a round that fails must not drop it.
    const p = fresh();
    const real = store(p);
    let failNext = true;
    const flaky = new Proxy(real, {
      get: (target, prop) => {
        if (prop === 'create' && failNext) {
          failNext = false;
          return () => Promise.reject(new Error('S3 unreachable'));
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const feed: TaskMap[] = [{ t1: entry({ progress: 7 }) }];
    const n = new PeerSync({
      store: flaky,
      log: pino({ level: 'silent' }),
      localChanges: () => Promise.resolve(feed.shift() ?? {}),
      now: () => 10_000,
      retentionMs: 7 * DAY,
    });
    await expect(n.round()).rejects.toThrow('S3 unreachable');
    const second = await n.round();
    expect(second.bucketsPushed).toBe(1);
    const reader = node(p, { current: {} });
    await reader.round();
    expect(reader.known()).toEqual({ t1: entry({ progress: 7 }) });
    // Quiet from then on: one conditional GET of the root (a 304), nothing fetched or pushed.
    expect(await n.round()).toMatchObject({
      requests: { GET: 1, PUT: 0, LIST: 0 },
      bucketsFetched: 0,
      bucketsPushed: 0,
    });
  });

  it('tells of every CAS race it lost, the last one of a round that gives up included', async () => {
    const p = fresh();
    const real = store(p);
    // Every manifest write meets a newer version: the round merges again until its attempts are spent.
    const racing = new Proxy(real, {
      get: (target, prop) => {
        if (prop === 'create' || prop === 'replace') return () => Promise.reject(new ConflictError('a newer version'));
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    let raced = 0;
    const n = new PeerSync({
      store: racing,
      log: pino({ level: 'silent' }),
      localChanges: () => Promise.resolve({ t1: entry() }),
      now: () => 10_000,
      retentionMs: 7 * DAY,
      onRaced: () => void raced++,
      deps: { sleep: () => Promise.resolve(), random: () => 0 },
    });
    await expect(n.round()).rejects.toThrow(ConflictError);
    expect(raced).toBe(6);
  });

  it('loses no update when 3 agents sync overlapping changes at the same time', async () => {
    const p = fresh();
    const a = { current: { t1: entry({ progress: 5 }), t2: entry(), shared: entry({ progress: 1 }) } as TaskMap };
    const b = { current: { t3: entry(), shared: entry({ progress: 9, stages: 2 }) } as TaskMap };
    const c = {
      current: { t4: entry(), shared: entry({ status: 'done', done: { node: 'node-3', epoch: 1, at: 5 } }) } as TaskMap,
    };
    const nodes = [node(p, a), node(p, b), node(p, c)];
    for (let round = 0; round < 3; round++) await Promise.all(nodes.map((n) => n.round()));
    const expected = mergeTasks(mergeTasks(a.current, b.current), c.current);
    for (const n of nodes) expect(hashTasks(n.known())).toBe(hashTasks(expected));
    expect(expected.shared).toMatchObject({ status: 'done', progress: 9, stages: 2 });
    // A fourth node that never held any task gets the whole state (the standby's hot copy).
    const late = node(p, { current: {} });
    await late.round();
    expect(hashTasks(late.known())).toBe(hashTasks(expected));
  });

  it('makes exactly one conditional GET in a round where nothing changed', async () => {
    const tasks = {
      current: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`task-${i}`, entry()])) as TaskMap,
    };
    const n = node(fresh(), tasks);
    await n.round();
    await n.round();
    const quiet = await n.round();
    expect(quiet.requests).toEqual({ GET: 1, PUT: 0, LIST: 0 });
    expect(quiet.bytesDown).toBe(0);
  });

  it('touches only the buckets that changed', async () => {
    const tasks = {
      current: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`task-${i}`, entry()])) as TaskMap,
    };
    const n = node(fresh(), tasks);
    await n.round();
    await n.round();
    tasks.current = { ...tasks.current, 'task-7': entry({ progress: 50 }) };
    const one = await n.round();
    expect(one.bucketsPushed).toBe(1);
    expect(one.requests.PUT).toBe(2);
    expect(bucketOf('task-7')).toBeGreaterThanOrEqual(0);
  });

  it('compacts completions older than the retention into dated archives, for good', async () => {
    const p = fresh();
    const old = entry({ status: 'done', done: { node: 'node-1', epoch: 1, at: Date.UTC(2026, 10, 1) } });
    const recent = entry({ status: 'done', done: { node: 'node-1', epoch: 1, at: Date.UTC(2026, 10, 28) } });
    const now = Date.UTC(2026, 10, 29);
    const a = { current: { old, recent, running: entry() } as TaskMap };
    const n = node(p, a, [], now);
    await n.round();
    expect(Object.keys(n.known()).sort()).toEqual(['recent', 'running']);
    expect(await store(p).list('archive/')).toEqual([`archive/2026-11-01/${bucketOf('old')}.json`]);
    // A peer that still remembers the old task does not bring it back.
    const peer = node(p, { current: { old } }, [], now);
    await peer.round();
    const reader = node(p, { current: {} }, [], now);
    await reader.round();
    expect(Object.keys(reader.known()).sort()).toEqual(['recent', 'running']);
  });

  it('rebuilds a corrupt shard from the nodes and from done.json, alerting once', async () => {
    const p = fresh();
    const a = { current: { t1: entry() } as TaskMap };
    await node(p, a).round();
    const b = bucketOf('t1');
    // A completion no node remembers, in the same bucket: only its done.json tells.
    const orphan = Array.from({ length: 5000 }, (_, i) => `orphan-${i}`).find((id) => bucketOf(id) === b)!;
    await store(p).create(`tasks/${orphan}/done.json`, {
      version: 1,
      taskId: orphan,
      node: 'node-2',
      epoch: 1,
      finishedAt: 1,
    });
    await s3().send(
      new PutObjectCommand({
        Bucket: cloud.bucket,
        Key: `${p}manifest/${b}.json`,
        Body: JSON.stringify({ version: 1, bucket: b, tasks: { t1: { status: 'sideways' } } }),
      }),
    );
    const corrupt: string[] = [];
    const fixer = node(p, { current: { t1: entry({ progress: 4 }) } }, corrupt);
    await fixer.round();
    expect(corrupt).toEqual([`manifest/${b}.json`]);
    const reader = node(p, { current: {} });
    await reader.round();
    expect(reader.known()).toMatchObject({
      t1: { progress: 4 },
      [orphan]: { status: 'done', done: { node: 'node-2' } },
    });
  });

  it.each([
    [
      'invalid JSON',
      (key: string) =>
        s3().send(new PutObjectCommand({ Bucket: cloud.bucket, Key: key, Body: '{"version": 1, "hashes": ' })),
    ],
    [
      'a wrong schema version',
      (key: string) =>
        s3().send(
          new PutObjectCommand({
            Bucket: cloud.bucket,
            Key: key,
            Body: JSON.stringify({ version: 2, buckets: 64, revision: 1, hashes: {} }),
          }),
        ),
    ],
    [
      'a 50 MB object',
      async (key: string) => {
        const client = s3();
        const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: cloud.bucket, Key: key }));
        const part = Buffer.alloc(10 * 1024 * 1024, 0x20);
        const parts = [];
        for (let i = 1; i <= 5; i++) {
          const out = await client.send(
            new UploadPartCommand({ Bucket: cloud.bucket, Key: key, UploadId, PartNumber: i, Body: part }),
          );
          parts.push({ ETag: out.ETag, PartNumber: i });
        }
        await client.send(
          new CompleteMultipartUploadCommand({
            Bucket: cloud.bucket,
            Key: key,
            UploadId,
            MultipartUpload: { Parts: parts },
          }),
        );
      },
    ],
  ])(
    'quarantines and rebuilds a manifest holding %s, losing no valid entry',
    async (_name, damage) => {
      const p = fresh();
      const a = {
        current: { t1: entry(), t2: entry({ status: 'done', done: { node: 'node-1', epoch: 1, at: 1 } }) } as TaskMap,
      };
      const b = { current: { t3: entry({ progress: 7 }) } as TaskMap };
      await node(p, a).round();
      await node(p, b).round();
      await damage(`${p}manifest.json`);
      const corrupt: string[] = [];
      const fixer = node(p, a, corrupt);
      await expect(fixer.round()).resolves.toBeDefined();
      expect(corrupt).toEqual(['manifest.json']);
      expect((await store(p).list('quarantine/')).length).toBe(1);
      // The rebuilt manifest is valid again and still carries every node's entries.
      const reader = node(p, { current: {} });
      await reader.round();
      expect(Object.keys(reader.known()).sort()).toEqual(['t1', 't2', 't3']);
    },
    60_000,
  );
});
