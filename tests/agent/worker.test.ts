import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { Worker } from '../../agent/worker/worker';
import { heldPath, HeldMessages } from '../../agent/worker/held';
import { rolePath, writeJsonAtomic } from '../../agent/registry';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { bootId } from '../../agent/runtime/boot';
import { mono } from '../../agent/runtime/clock';
import { buildConfig, scaleConfig } from '../../lib/core/config';
import { TransientError } from '../../lib/core/errors';
import { memoryLogger } from '../helpers/memory-logger';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { FleetEvent } from '../../lib/core/events';
import { MemoryS3 } from '../helpers/memory-s3';

/** A queue that hands out a scripted sequence of receives and records what was acknowledged. */
const scriptedQueue = (receives: QueueMessage[][]) => {
  const deleted: string[] = [];
  const queue = {
    receive: async () => {
      await new Promise((r) => setTimeout(r, 20));
      return receives.shift() ?? [];
    },
    delete: (handle: string) => {
      deleted.push(handle);
      return Promise.resolve();
    },
    setVisibility: () => Promise.resolve(),
  } as unknown as TaskQueue;
  return { queue, deleted };
};

/** The worker's held.json names the receipt (the file itself exists from the start). */
const holds = (dataDir: string, receipt: string): boolean =>
  existsSync(heldPath(dataDir)) && readFileSync(heldPath(dataDir), 'utf8').includes(receipt);

describe('Worker', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.restore());

  it('adopts the new receipt when SQS hands out a running task again, and acknowledges with it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
    const config = {
      ...buildConfig(
        {},
        {
          sampleIntervalSeconds: 0.2,
          syncIntervalSeconds: 0.4,
          leaseRenewSeconds: 0.4,
          leaseExpirySeconds: 1.2,
          receiveWaitSeconds: 0,
        },
      ),
      nodeName: 'node-1',
      dataDir,
      queueUrl: 'http://q',
    };
    await writeJsonAtomic(rolePath(dataDir), {
      role: 'primary',
      epoch: 3,
      validUntil: mono() + 60_000,
      boot: bootId(),
    });
    const body = JSON.stringify({ taskId: 't1', workSeconds: 0.4 });
    // The same message twice: the second receive carries the receipt SQS honours now.
    const { queue, deleted } = scriptedQueue([
      [{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }],
      [{ id: 'm1', receiptHandle: 'h2', body, receiveCount: 2 }],
    ]);
    const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
      bucket: 'b',
      prefix: 'peer-sync/',
      maxObjectBytes: 1 << 20,
    });
    const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
    await worker.start();
    for (let i = 0; i < 100 && deleted.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await worker.close();
    expect(deleted).toEqual(['h2']);
    expect(s3.json('peer-sync/tasks/t1/done.json')).toMatchObject({ node: 'node-1', epoch: 3 });
  });

  it(
    'waits out an S3 outage with the message it holds: it receives nothing more, ' +
      'counts no failure, keeps extending, and completes once S3 is back',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const config = {
        ...buildConfig(
          {},
          {
            sampleIntervalSeconds: 0.2,
            syncIntervalSeconds: 0.4,
            leaseRenewSeconds: 0.4,
            leaseExpirySeconds: 1.2,
            receiveWaitSeconds: 0,
            visibilityTimeoutSeconds: 0.3,
            retryCapSeconds: 0.05,
          },
        ),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 3,
        validUntil: mono() + 60_000,
        boot: bootId(),
      });
      const body = (taskId: string): string => JSON.stringify({ taskId, workSeconds: 0.1 });
      const calls: string[] = [];
      const scripted = scriptedQueue([
        [{ id: 'm1', receiptHandle: 'h1', body: body('t1'), receiveCount: 1 }],
        [{ id: 'm2', receiptHandle: 'h2', body: body('t2'), receiveCount: 1 }],
      ]);
      const queue = {
        ...scripted.queue,
        receive: (...args: unknown[]) => (
          calls.push('receive'),
          (scripted.queue.receive as (...a: unknown[]) => Promise<QueueMessage[]>)(...args)
        ),
        send: (text: string) => (calls.push(`send ${text}`), Promise.resolve('m-new')),
        setVisibility: (handle: string, seconds: number) => (calls.push(`${handle}=${seconds}`), Promise.resolve()),
      } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
        requestRetry: { attempts: 1, baseMs: 1, capMs: 1 },
      });
      let outage = true;
      const read = store.read.bind(store);
      store.read = (key: string, schema: never) =>
        outage ? Promise.reject(new TransientError(`GET ${key}: 503`)) : read(key, schema);
      const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      await worker.start();
      await new Promise((r) => setTimeout(r, 1500));
      const during = [...calls];
      outage = false;
      for (let i = 0; i < 200 && scripted.deleted.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      await worker.close();
      // One receive before the outage showed, none while it lasted;
      // extended all along, never handed back or sent again.
      expect(during.filter((c) => c === 'receive')).toEqual(['receive']);
      expect(during.filter((c) => c === 'h1=0.3').length).toBeGreaterThanOrEqual(3);
      expect(during.filter((c) => c.startsWith('send') || c.endsWith('=0'))).toEqual([]);
      expect(scripted.deleted).toEqual(['h1', 'h2']);
      expect(s3.json('peer-sync/tasks/t1/done.json')).toMatchObject({ node: 'node-1', epoch: 3 });
    },
  );

  it(
    "counts a stage's failure toward poison and alerts its stderr, " +
      'but sends an exit 75 back later with no failure counted',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const script = 'case "$TASK_ID" in later) exit 75;; bad) echo "Unknown encoder libx265" >&2; exit 2;; esac';
      const pipeline = [{ name: 'work', command: ['/bin/sh', '-c', script] }];
      const config = {
        ...buildConfig(
          {},
          {
            sampleIntervalSeconds: 0.2,
            syncIntervalSeconds: 0.4,
            leaseRenewSeconds: 0.4,
            leaseExpirySeconds: 1.2,
            receiveWaitSeconds: 0,
            visibilityTimeoutSeconds: 3,
            maxTaskFailures: 2,
            pipeline,
          },
        ),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 3,
        validUntil: mono() + 60_000,
        boot: bootId(),
      });
      const m = (taskId: string, receiveCount: number, failures?: number): QueueMessage => ({
        id: taskId,
        receiptHandle: `h-${taskId}-${receiveCount}`,
        body: JSON.stringify({ taskId }),
        receiveCount,
        ...(failures === undefined ? {} : { failures }),
      });
      const scripted = scriptedQueue([[m('later', 4), m('bad', 1)], [], [m('bad', 1, 1)]]);
      const calls: string[] = [];
      const queue = {
        ...scripted.queue,
        send: (_: string, failures: number) => (calls.push(`send failures=${failures}`), Promise.resolve('m-new')),
        setVisibility: (handle: string, seconds: number) => (calls.push(`${handle}=${seconds}`), Promise.resolve()),
      } as unknown as TaskQueue;
      const deadLetters = {
        send: (_: string, failures: number) => (calls.push(`dead failures=${failures}`), Promise.resolve('m-dead')),
      } as unknown as TaskQueue;
      const alerts: FleetEvent[] = [];
      const topic = { publish: (e: FleetEvent) => (alerts.push(e), Promise.resolve('id')) } as unknown as AlertTopic;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const worker = new Worker({
        config,
        store,
        queue,
        deadLetters,
        log: memoryLogger().log,
        now: Date.now,
        alerts: topic,
      });
      await worker.start();
      for (let i = 0; i < 200 && alerts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await worker.close();
      // Four receives so far: back in 4 visibility timeouts, counted by SQS's receives alone.
      expect(calls.filter((c) => c.startsWith('h-later'))).toEqual(['h-later-4=12']);
      expect(calls.filter((c) => c.includes('failures='))).toEqual(['send failures=1', 'dead failures=2']);
      expect(scripted.deleted).toEqual(['h-bad-1', 'h-bad-1']);
      expect(alerts.map((a) => a.kind)).toEqual(['POISON_TASK']);
      expect(alerts[0]?.summary).toMatch(
        new RegExp(
          /task bad failed 2 times\. Moved to the dead-letter queue\. /.source +
            /.*exited with 2; stderr ends:\nUnknown encoder libx265/.source,
        ),
      );
      // Neither task is in hand any more: their folders are gone from the node.
      expect(existsSync(join(dataDir, 'work', 'bad'))).toBe(false);
      expect(existsSync(join(dataDir, 'work', 'later'))).toBe(false);
    },
  );

  it('extends what it holds while its lease is valid, and stops extending once the lease has lapsed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
    const config = {
      ...buildConfig(
        {},
        {
          sampleIntervalSeconds: 0.2,
          syncIntervalSeconds: 0.4,
          leaseRenewSeconds: 0.4,
          leaseExpirySeconds: 1.2,
          receiveWaitSeconds: 0,
          visibilityTimeoutSeconds: 0.3,
        },
      ),
      nodeName: 'node-1',
      dataDir,
      queueUrl: 'http://q',
    };
    await writeJsonAtomic(rolePath(dataDir), {
      role: 'primary',
      epoch: 3,
      validUntil: mono() + 60_000,
      boot: bootId(),
    });
    const extended: number[] = [];
    const body = JSON.stringify({ taskId: 't1', workSeconds: 60 });
    const queue = {
      ...scriptedQueue([[{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }]]).queue,
      setVisibility: (_: string, seconds: number) => (seconds > 0 && extended.push(mono()), Promise.resolve()),
    } as unknown as TaskQueue;
    const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
      bucket: 'b',
      prefix: 'peer-sync/',
      maxObjectBytes: 1 << 20,
    });
    const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
    await worker.start();
    await new Promise((r) => setTimeout(r, 700));
    // The lease lapses (its agent could not renew): validity in the past, the role still primary.
    await writeJsonAtomic(rolePath(dataDir), { role: 'primary', epoch: 3, validUntil: mono() - 1, boot: bootId() });
    const lapsed = mono();
    await new Promise((r) => setTimeout(r, 800));
    await worker.close();
    // Every 100 ms (a third of 300 ms) while the lease held; none once the worker saw it lapse (a tick later).
    expect(extended.filter((t) => t < lapsed).length).toBeGreaterThanOrEqual(4);
    expect(extended.filter((t) => t > lapsed + 300)).toEqual([]);
  });

  describe('after a worker died holding a task', () => {
    /**
     * A worker receives a 60 s task and is halted (as by SIGKILL: it hands nothing back); the
     * next worker starts under `role` and records what it does with the message's visibility.
     */
    const restartWith = async (role: 'primary' | 'standby' | 'late-primary' | 'slow-sqs') => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const nodes = [
        { name: 'node-1', instanceId: 'mi-00000000000000001' },
        { name: 'node-2', instanceId: 'mi-00000000000000002' },
      ];
      const config = {
        ...buildConfig(
          {},
          {
            sampleIntervalSeconds: 0.2,
            syncIntervalSeconds: 0.4,
            leaseRenewSeconds: 0.4,
            leaseExpirySeconds: 1.2,
            receiveWaitSeconds: 0,
            workerStopTimeoutSeconds: 0.4,
            nodes,
          },
        ),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };

      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 3,
        validUntil: mono() + 60_000,
        boot: bootId(),
      });
      const body = JSON.stringify({ taskId: 't1', workSeconds: 60 });
      const before: number[] = [];
      const queue = {
        ...scriptedQueue([[{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }]]).queue,
        setVisibility: (_: string, seconds: number) => (before.push(seconds), Promise.resolve()),
      } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const first = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      const after: { handle: string; seconds: number }[] = [];
      let next: Worker | undefined;
      try {
        await first.start();
        for (let i = 0; i < 100 && !holds(dataDir, 'h1'); i++) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 100));
        expect(before).toEqual([]);
        // It dies: its loops stop without a hand-back (its fence check would otherwise race the next worker's start).
        await first.halt();
        if (role === 'standby')
          await writeJsonAtomic(rolePath(dataDir), { role: 'standby', epoch: 4, validUntil: 0, boot: bootId() });
        // Its agent restarted too and is pending (an await-fence record):
        // the role comes back, same epoch, after the worker's start.
        if (role === 'late-primary')
          await writeJsonAtomic(rolePath(dataDir), { role: 'pending', epoch: 3, validUntil: 0, boot: bootId() });
        // A slow SQS: the next worker's first extension times out.
        let failing = role === 'slow-sqs' ? 1 : 0;
        const nextQueue = {
          ...scriptedQueue([]).queue,
          setVisibility: (handle: string, seconds: number) => {
            after.push({ handle, seconds });
            return failing-- > 0
              ? Promise.reject(new TransientError('ChangeMessageVisibility timed out'))
              : Promise.resolve();
          },
        } as unknown as TaskQueue;
        next = new Worker({ config, store, queue: nextQueue, log: memoryLogger().log, now: Date.now, alerts: null });
        await next.start();
        if (role === 'late-primary') {
          expect(after).toEqual([]);
          await writeJsonAtomic(rolePath(dataDir), {
            role: 'primary',
            epoch: 3,
            validUntil: mono() + 60_000,
            boot: bootId(),
          });
          for (let i = 0; i < 100 && after.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
        }
        const tries = role === 'slow-sqs' ? 2 : 0;
        for (let i = 0; i < 100 && after.length < tries; i++) await new Promise((r) => setTimeout(r, 20));
        return { after: [...after], stillHeld: holds(dataDir, 'h1') };
      } finally {
        await next?.close();
        await first.close();
      }
    };

    it(
      'carries on with it under its receipt while the node may consume: ' +
        'the task goes on now, not after its visibility timeout',
      async () => {
        const { after } = await restartWith('primary');
        // Extended first (the receipt is still honoured), and only handed back by the close that ends the test.
        expect(after[0]).toEqual({ handle: 'h1', seconds: 30 });
        expect(after.slice(1).every((v) => v.seconds === 0)).toBe(true);
        expect(after.map((v) => v.handle)).not.toContain('older');
      },
    );

    it(
      'carries on with it once the node is primary again in ' +
        'the same epoch, after the worker started without the role',
      async () => {
        const { after } = await restartWith('late-primary');
        expect(after[0]).toEqual({ handle: 'h1', seconds: 30 });
        expect(after.map((v) => v.handle)).not.toContain('older');
      },
    );

    it('tries the extension again when it fails: a slow SQS costs a retry, not the visibility timeout', async () => {
      const { after, stillHeld } = await restartWith('slow-sqs');
      expect(after.slice(0, 2)).toEqual([
        { handle: 'h1', seconds: 30 },
        { handle: 'h1', seconds: 30 },
      ]);
      expect(stillHeld).toBe(true);
    });

    it(
      'leaves it alone when the node may not consume: ' +
        'it comes back to the new primary when its visibility runs out',
      async () => {
        expect(await restartWith('standby')).toEqual({ after: [], stillHeld: true });
      },
    );
  });

  it(
    'fences its running tasks and hands their messages back ' +
      'when the lease lapses, even if the poll loop saw it first',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const config = {
        ...buildConfig(
          {},
          {
            sampleIntervalSeconds: 0.2,
            syncIntervalSeconds: 0.4,
            leaseRenewSeconds: 0.4,
            leaseExpirySeconds: 1.2,
            receiveWaitSeconds: 0,
          },
        ),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 3,
        validUntil: mono() + 60_000,
        boot: bootId(),
      });
      const handedBack: string[] = [];
      const body = JSON.stringify({ taskId: 't1', workSeconds: 60 });
      const queue = {
        ...scriptedQueue([[{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }]]).queue,
        setVisibility: (handle: string, seconds: number) => (
          seconds === 0 && handedBack.push(handle),
          Promise.resolve()
        ),
      } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      await worker.start();
      const running = (worker as unknown as { inHand: { size: number } }).inHand;
      for (let i = 0; i < 100 && running.size === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(running.size).toBe(1);
      // The agent fences; the poll loop notices first and marks the worker idle.
      // In one step, so no fence check runs between them.
      writeFileSync(rolePath(dataDir), JSON.stringify({ role: 'fenced', epoch: 3, validUntil: 0, boot: bootId() }));
      (worker as unknown as { book: { consumingEpoch: number | null } }).book.consumingEpoch = null;
      for (let i = 0; i < 50 && handedBack.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      // By the fence watch, not by the close that ends the test.
      const beforeClose = [...handedBack];
      await worker.close();
      expect(beforeClose).toEqual(['h1']);
    },
  );

  describe('a worker stopped with tasks in hand (systemctl stop or restart)', () => {
    /** A worker receives a 60 s task and is closed; `leased` says whether its lease is still valid then. */
    const stopWith = async (leased: boolean) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const config = {
        ...buildConfig(
          {},
          {
            sampleIntervalSeconds: 0.2,
            syncIntervalSeconds: 0.4,
            leaseRenewSeconds: 0.4,
            leaseExpirySeconds: 1.2,
            receiveWaitSeconds: 0,
            workerStopTimeoutSeconds: 0.4,
          },
        ),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 3,
        validUntil: mono() + 60_000,
        boot: bootId(),
      });
      const body = JSON.stringify({ taskId: 't1', workSeconds: 60 });
      const visibility: number[] = [];
      const queue = {
        ...scriptedQueue([[{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }]]).queue,
        setVisibility: (_: string, seconds: number) => (visibility.push(seconds), Promise.resolve()),
      } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      await worker.start();
      for (let i = 0; i < 100 && !holds(dataDir, 'h1'); i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      if (!leased)
        await writeJsonAtomic(rolePath(dataDir), { role: 'fenced', epoch: 4, validUntil: 0, boot: bootId() });
      await worker.close();
      const left = await new HeldMessages(dataDir, 300_000, memoryLogger().log).leftovers(1_000);
      return { visibility, held: left.messages.map((m) => m.message.receiptHandle) };
    };

    it(
      'under a valid lease keeps its messages held, checkpointed, ' +
        'for the next worker or a new primary: not behind the backlog',
      async () => {
        expect(await stopWith(true)).toEqual({ visibility: [], held: ['h1'] });
      },
    );

    it('without one hands them back to the queue at once', async () => {
      expect(await stopWith(false)).toEqual({ visibility: [0], held: [] });
    });

    it(
      'takes in a receive answered while it stops (as in the socket of a ' +
        'frozen worker that is then stopped), never leaving its messages invisible',
      async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
        const config = {
          ...buildConfig(
            {},
            {
              sampleIntervalSeconds: 0.2,
              syncIntervalSeconds: 0.4,
              leaseRenewSeconds: 0.4,
              leaseExpirySeconds: 1.2,
              receiveWaitSeconds: 1,
              workerStopTimeoutSeconds: 0.4,
            },
          ),
          nodeName: 'node-1',
          dataDir,
          queueUrl: 'http://q',
        };
        await writeJsonAtomic(rolePath(dataDir), {
          role: 'primary',
          epoch: 3,
          validUntil: mono() + 60_000,
          boot: bootId(),
        });
        let asked = false;
        const queue = {
          ...scriptedQueue([]).queue,
          // The answer is on its way when the stop comes, 60 ms
          // after the ask; like the SDK, an abort before it rejects.
          receive: async (_max: number, _wait: number, _visibility: number, signal: AbortSignal) => {
            if (asked) return [];
            asked = true;
            await new Promise<void>((resolve, reject) => {
              const timer = setTimeout(resolve, 60);
              signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted'))), {
                once: true,
              });
            });
            return [
              {
                id: 'm1',
                receiptHandle: 'h1',
                body: JSON.stringify({ taskId: 't1', workSeconds: 60 }),
                receiveCount: 1,
              },
            ];
          },
        } as unknown as TaskQueue;
        const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
          bucket: 'b',
          prefix: 'peer-sync/',
          maxObjectBytes: 1 << 20,
        });
        const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
        await worker.start();
        for (let i = 0; i < 100 && !asked; i++) await new Promise((r) => setTimeout(r, 5));
        await worker.close();
        const left = await new HeldMessages(dataDir, 300_000, memoryLogger().log).leftovers(1_000);
        expect(left.messages.map((m) => m.message.receiptHandle)).toEqual(['h1']);
      },
    );
  });

  describe('long polls', () => {
    /** Starts a worker whose lease is valid for `validMs` more, and records each receive's wait. */
    const polling = async (
      validMs: number,
      overrides: Record<string, number>,
      timeScale = 1,
      answerMs: number | 'the wait' = 0,
    ) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const base = buildConfig({}, overrides);
      const config = {
        ...(timeScale === 1 ? base : scaleConfig(base, timeScale)),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      await writeJsonAtomic(rolePath(dataDir), {
        role: 'primary',
        epoch: 1,
        validUntil: mono() + validMs,
        boot: bootId(),
      });
      const waits: number[] = [];
      const askedAt: number[] = [];
      const queue = {
        receive: async (_max: number, waitSeconds: number) => {
          waits.push(waitSeconds);
          askedAt.push(mono());
          // An empty queue's long poll answers at the end of its wait.
          await new Promise((r) => setTimeout(r, answerMs === 'the wait' ? waitSeconds * 1000 : answerMs));
          return [];
        },
        setVisibility: () => Promise.resolve(),
      } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      await worker.start();
      // The agent's renewal as the worker sees it: the role file, good for fenceAfter from now.
      const renewedAt: number[] = [];
      const renew = () => {
        renewedAt.push(mono());
        return writeJsonAtomic(rolePath(dataDir), {
          role: 'primary',
          epoch: 1,
          validUntil: mono() + (config.leaseExpirySeconds - config.leaseRenewSeconds) * 1000,
          boot: bootId(),
        });
      };
      return { waits, askedAt, renewedAt, renew, close: () => worker.close() };
    };
    const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

    it('waits whole seconds that end before the lease does', async () => {
      const p = await polling(15_500, {});
      await settle(100);
      await p.close();
      // 15.5 s of lease, less a tenth of the renewal period, rounded down: 14 s.
      expect(p.waits[0]).toBe(14);
    });

    it('does not ask at all when less than a whole second of lease is left', async () => {
      const p = await polling(1_500, {});
      await settle(200);
      await p.close();
      expect(p.waits).toEqual([]);
    });

    it('waits whole seconds of the drill when time runs faster, not zero', async () => {
      // ×20: 0.9 s of lease is 18 scenario seconds; less 0.5 (a tenth of the renewal) and the
      // start-up, some 15 to 17 whole ones; on the old one-second grain it was 0 (a short poll).
      const p = await polling(900, {}, 20, 50);
      await settle(30);
      await p.close();
      const steps = (p.waits[0] ?? 0) * 20;
      expect(steps).toBeCloseTo(Math.round(steps), 6);
      expect(steps).toBeGreaterThanOrEqual(15);
      expect(steps).toBeLessThanOrEqual(17);
    });

    it(
      'waits for a renewal due within a quarter period rather than ask for a poll ' +
        'the lease cuts short: one long poll per two renewals, not one per renewal',
      async () => {
        // ×20: renewals every 0.5 s, the lease good for 1 s after each (fenceAfter), polls of up to
        // 1 s (20 scenario seconds). Without the wait, each renewal would cut the next poll in half.
        const p = await polling(1_000, {}, 20, 'the wait');
        const renewals = setInterval(() => void p.renew(), 500);
        try {
          await settle(4_200);
        } finally {
          clearInterval(renewals);
          await p.close();
        }
        // The rule waits only for a renewal due within a quarter period (125 ms): after a renewal
        // the machine's load made that late (or early), a poll and the next one may be cut short.
        const late = (at: number): boolean => {
          const before = p.renewedAt.filter((r) => r <= at);
          const recent = before.filter((r) => r >= at - 2_000);
          const gaps = recent.slice(1).map((r, i) => r - (recent[i] ?? r));
          return at - (before.at(-1) ?? -Infinity) > 625 || gaps.some((g) => g < 375 || g > 625);
        };
        const short = p.waits
          .map((w, i) => ({ w, at: p.askedAt[i] ?? 0 }))
          .slice(1)
          .filter(({ w }) => w * 20 < 17);
        const excused = short.filter(({ at }) => late(at)).length;
        // About 4 polls of nearly a second each (the first may be cut short: it started between
        // renewals); cut short by every renewal they would be 8 of half a second.
        expect(p.waits.length).toBeGreaterThanOrEqual(3);
        expect(p.waits.length).toBeLessThanOrEqual(6 + excused);
        expect(short.length).toBe(excused);
      },
    );

    it('paces short polls of an empty queue to one per quarter renewal period', async () => {
      const p = await polling(60_000, {
        receiveWaitSeconds: 0,
        leaseRenewSeconds: 0.4,
        leaseExpirySeconds: 1.2,
        sampleIntervalSeconds: 0.2,
        syncIntervalSeconds: 0.4,
      });
      await settle(1_000);
      await p.close();
      // One ask every 100 ms at most (and the first at once).
      expect(p.waits.length).toBeGreaterThan(3);
      expect(p.waits.length).toBeLessThanOrEqual(11);
      expect(p.waits.every((w) => w === 0)).toBe(true);
    });
  });

  describe('on fake timers', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());
    /** Lets file I/O finish between timer steps: fake timers do not wait for libuv. */
    const drain = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };

    it('runs its registry and fence loops on the tick, and leaves no timer behind once closed', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
      const config = {
        ...buildConfig({}, { sampleIntervalSeconds: 1, receiveWaitSeconds: 0 }),
        nodeName: 'node-1',
        dataDir,
        queueUrl: 'http://q',
      };
      // No lease: the worker never receives, only its loops run.
      const receive = jest.fn(() => Promise.resolve([]));
      const queue = { receive, setVisibility: () => Promise.resolve() } as unknown as TaskQueue;
      const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      });
      const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
      const started = worker.start();
      await drain();
      await started;
      // A tick is a quarter of the sample interval: both loops are pending.
      expect(jest.getTimerCount()).toBeGreaterThanOrEqual(2);
      for (let i = 0; i < 8; i++) {
        await jest.advanceTimersByTimeAsync(250);
        await drain();
      }
      const closing = worker.close();
      for (let i = 0; i < 20; i++) {
        await jest.advanceTimersByTimeAsync(250);
        await drain();
      }
      await closing;
      await jest.advanceTimersByTimeAsync(10_000);
      expect(jest.getTimerCount()).toBe(0);
      expect(receive).not.toHaveBeenCalled();
    });
  });
});
