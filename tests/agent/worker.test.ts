import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { Worker } from '../../agent/worker/worker';
import { rolePath, writeJsonAtomic } from '../../agent/registry';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { bootId } from '../../lib/boot';
import { mono } from '../../lib/clock';
import { buildConfig } from '../../lib/core/config';
import { memoryLogger } from '../helpers/memory-logger';
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

describe('Worker', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.mock.restore());

  it('adopts the new receipt when SQS hands out a running task again, and acknowledges with it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'qf-worker-'));
    const config = { ...buildConfig({}, { sampleIntervalSeconds: 0.2, syncIntervalSeconds: 0.4, leaseRenewSeconds: 0.4, leaseExpirySeconds: 1.2, receiveWaitSeconds: 0 }), nodeName: 'node-1', dataDir, queueUrl: 'http://q' };
    await writeJsonAtomic(rolePath(dataDir), { role: 'primary', epoch: 3, validUntil: mono() + 60_000, boot: bootId() });
    const body = JSON.stringify({ taskId: 't1', workSeconds: 0.4 });
    // The same message twice: the second receive carries the receipt SQS honours now.
    const { queue, deleted } = scriptedQueue([[{ id: 'm1', receiptHandle: 'h1', body, receiveCount: 1 }], [{ id: 'm1', receiptHandle: 'h2', body, receiveCount: 2 }]]);
    const store = new StateStore(new S3Client({ region: 'us-west-2' }), { bucket: 'b', prefix: 'peer-sync/', maxObjectBytes: 1 << 20 });
    const worker = new Worker({ config, store, queue, log: memoryLogger().log, now: Date.now, alerts: null });
    await worker.start();
    for (let i = 0; i < 100 && deleted.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await worker.close();
    expect(deleted).toEqual(['h2']);
    expect(s3.json('peer-sync/tasks/t1/done.json')).toMatchObject({ node: 'node-1', epoch: 3 });
  });
});
