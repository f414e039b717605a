import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { StateStore } from '../../../lib/aws/state-store';
import {
  ConcurrentWriteError,
  ConflictError,
  CorruptObjectError,
  OversizedError,
  ThrottledError,
} from '../../../lib/core/errors';
import { MemoryS3 } from '../../helpers/memory-s3';

const counter = z.strictObject({ n: z.number().int() });
const noSleep = { sleep: () => Promise.resolve(), random: () => 0.5 };
const makeStore = (maxObjectBytes = 1024): StateStore =>
  new StateStore(new S3Client({ region: 'us-west-2' }), {
    bucket: 'b',
    prefix: 'peer-sync/',
    maxObjectBytes,
    deps: noSleep,
  });
const slowDown = (): S3ServiceException =>
  new S3ServiceException({
    name: 'SlowDown',
    $fault: 'server',
    $metadata: { httpStatusCode: 503 },
    message: 'SlowDown',
  });

describe('StateStore', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.restore());

  it('creates with If-None-Match: * and refuses a second create with ConflictError', async () => {
    const store = makeStore();
    await store.create('x.json', { n: 1 });
    await expect(store.create('x.json', { n: 2 })).rejects.toBeInstanceOf(ConflictError);
    expect(s3.json('peer-sync/x.json')).toEqual({ n: 1 });
  });

  it('quarantines by creating a copy aside, never over an existing copy', async () => {
    const store = makeStore();
    s3.set('peer-sync/manifest.json', '{ damaged');
    const copy = await store.quarantine('manifest.json', 'not JSON', 7);
    expect(copy).toBe('quarantine/manifest.json.7.txt');
    expect(s3.json(`peer-sync/${copy}`)).toEqual({ reason: 'not JSON', text: '{ damaged' });
    expect(s3.puts.map((p) => p.condition)).toEqual(['if-none-match']);
    await expect(store.quarantine('manifest.json', 'again', 7)).rejects.toBeInstanceOf(ConflictError);
    expect(s3.json(`peer-sync/${copy}`)).toEqual({ reason: 'not JSON', text: '{ damaged' });
  });

  it('replaces only against the current ETag', async () => {
    const store = makeStore();
    const etag = await store.create('x.json', { n: 1 });
    await store.replace('x.json', { n: 2 }, etag);
    await expect(store.replace('x.json', { n: 3 }, etag)).rejects.toBeInstanceOf(ConflictError);
    expect(s3.json('peer-sync/x.json')).toEqual({ n: 2 });
  });

  it('retries a throttled request with back-off and then succeeds', async () => {
    const store = makeStore();
    s3.mock.on(PutObjectCommand).rejectsOnce(slowDown()).rejectsOnce(slowDown()).resolves({ ETag: '"e"' });
    await expect(store.put('x.json', { n: 1 })).resolves.toBe('"e"');
    expect(s3.mock).toHaveReceivedCommandTimes(PutObjectCommand, 3);
  });

  it('gives up after its bounded attempts with ThrottledError', async () => {
    const store = makeStore();
    s3.mock.on(PutObjectCommand).rejects(slowDown());
    await expect(store.put('x.json', { n: 1 })).rejects.toBeInstanceOf(ThrottledError);
    expect(s3.mock).toHaveReceivedCommandTimes(PutObjectCommand, 6);
  });

  it('reports malformed JSON as CorruptObjectError with the ETag', async () => {
    s3.set('peer-sync/x.json', '{"n": 1');
    await expect(makeStore().read('x.json', counter)).rejects.toBeInstanceOf(CorruptObjectError);
  });

  it('reports a schema mismatch naming the field', async () => {
    s3.set('peer-sync/x.json', { n: 'one' });
    await expect(makeStore().read('x.json', counter)).rejects.toMatchObject({ field: 'n' });
  });

  it('refuses an oversized object without parsing it', async () => {
    s3.set('peer-sync/x.json', { n: 1, pad: 'x'.repeat(2000) });
    await expect(makeStore(1024).read('x.json', counter)).rejects.toBeInstanceOf(OversizedError);
  });

  it('returns null for a missing object', async () => {
    await expect(makeStore().read('missing.json', counter)).resolves.toBeNull();
  });

  it('update re-reads and re-applies after losing a CAS, and applies no lost update', async () => {
    const store = makeStore();
    await Promise.all(
      Array.from({ length: 10 }, () =>
        store.update('c.json', counter, (cur) => ({ value: { n: (cur?.n ?? 0) + 1 }, result: null })),
      ),
    );
    expect(s3.json('peer-sync/c.json')).toEqual({ n: 10 });
  });

  it('update replaces a corrupt object by CAS against its ETag after reporting it', async () => {
    s3.set('peer-sync/c.json', 'garbage');
    const reported: string[] = [];
    await makeStore().update(
      'c.json',
      counter,
      (cur) => ({ value: { n: (cur?.n ?? 0) + 1 }, result: null }),
      (e) => {
        reported.push(e.key);
        return Promise.resolve();
      },
    );
    expect(reported).toEqual(['peer-sync/c.json']);
    expect(s3.json('peer-sync/c.json')).toEqual({ n: 1 });
  });

  it('counts its requests', async () => {
    const store = makeStore();
    await store.create('x.json', { n: 1 });
    await store.read('x.json', counter);
    expect(store.counts).toMatchObject({ PUT: 1, GET: 1 });
    expect(s3.mock).toHaveReceivedCommandWith(GetObjectCommand, { Bucket: 'b', Key: 'peer-sync/x.json' });
  });

  describe('ambiguous outcomes', () => {
    it.each(['reset', 'internal-error'] as const)(
      'takes a create whose response was lost (%s) as done, not as "exists"',
      async (how) => {
        const store = makeStore();
        s3.loseNext((k) => k === 'peer-sync/x.json', how);
        const etag = await store.create('x.json', { n: 1 });
        expect(etag).toBe(s3.objects.get('peer-sync/x.json')?.etag);
        expect(s3.json('peer-sync/x.json')).toEqual({ n: 1 });
      },
    );

    it('takes a CAS whose response was lost as done: update applies once and says it wrote', async () => {
      const store = makeStore();
      await store.create('c.json', { n: 1 });
      s3.loseNext((k) => k === 'peer-sync/c.json');
      let applied = 0;
      const out = await store.update('c.json', counter, (cur) => {
        applied++;
        return { value: { n: (cur?.n ?? 0) + 1 }, result: 'claimed' };
      });
      expect(out).toEqual({ written: true, result: 'claimed' });
      expect(applied).toBe(1);
      expect(s3.json('peer-sync/c.json')).toEqual({ n: 2 });
    });

    it(
      'applies a CAS once even when another writer wrote ' + 'on top of it before its lost response came back',
      async () => {
        const store = makeStore();
        await store.create('c.json', { n: 1 });
        const other = makeStore();
        s3.loseNext(
          (k) => k === 'peer-sync/c.json',
          'reset',
          async () => {
            await other.update('c.json', counter, (cur) => ({ value: { n: (cur?.n ?? 0) + 10 }, result: null }));
          },
        );
        let applied = 0;
        const out = await store.update('c.json', counter, (cur) => {
          applied++;
          return { value: { n: (cur?.n ?? 0) + 1 }, result: 'mine' };
        });
        expect(out).toEqual({ written: true, result: 'mine' });
        expect(applied).toBe(1);
        expect(s3.json('peer-sync/c.json')).toEqual({ n: 12 });
      },
    );

    it.each(['reset', 'internal-error'] as const)(
      'takes a plain PUT whose responses are all lost (%s) as done once it is there, without sending it again',
      async (how) => {
        const store = makeStore();
        for (let i = 0; i < 10; i++) s3.loseNext((k) => k === 'peer-sync/h.json', how);
        const etag = await store.put('h.json', { n: 1 });
        expect(etag).toBe(s3.objects.get('peer-sync/h.json')?.etag);
        expect(s3.puts.filter((p) => p.key === 'peer-sync/h.json')).toHaveLength(1);
      },
    );

    it('sends a PUT again when the look after a 500 finds it did not land', async () => {
      const store = makeStore();
      s3.failNext(
        new S3ServiceException({
          name: 'InternalError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
          message: 'internal',
        }),
      );
      await store.put('h.json', { n: 2 });
      expect(s3.json('peer-sync/h.json')).toEqual({ n: 2 });
    });

    it('still refuses a create that another writer won', async () => {
      const store = makeStore();
      await makeStore().create('x.json', { n: 1 });
      s3.failNext(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      await expect(store.create('x.json', { n: 2 })).rejects.toBeInstanceOf(ConflictError);
      expect(s3.json('peer-sync/x.json')).toEqual({ n: 1 });
    });

    it('retries a 409 ConditionalRequestConflict instead of reading it as "exists"', async () => {
      const store = makeStore();
      const conflict = new S3ServiceException({
        name: 'ConditionalRequestConflict',
        $fault: 'client',
        $metadata: { httpStatusCode: 409 },
        message: 'conflict',
      });
      s3.failNext(conflict);
      await expect(store.create('x.json', { n: 1 })).resolves.toBeDefined();
      expect(s3.json('peer-sync/x.json')).toEqual({ n: 1 });
    });

    it('gives up on endless 409s with ConcurrentWriteError, never ConflictError', async () => {
      const store = makeStore();
      s3.mock.on(PutObjectCommand).rejects(
        new S3ServiceException({
          name: 'ConditionalRequestConflict',
          $fault: 'client',
          $metadata: { httpStatusCode: 409 },
          message: 'conflict',
        }),
      );
      await expect(store.create('x.json', { n: 1 })).rejects.toBeInstanceOf(ConcurrentWriteError);
    });
  });
});
