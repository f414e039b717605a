import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { Agent } from '../../agent/agent';
import { LeaseKeeper } from '../../agent/lease-keeper';
import { PeerSync } from '../../agent/peer-sync';
import { TaskRunner, type TaskEvents } from '../../agent/worker/task-runner';
import { TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { inTable } from '../../lib/aws/stores';
import { buildConfig } from '../../lib/core/config';
import { KEYS } from '../../lib/core/keys';
import type { Leader } from '../../lib/core/schemas';
import { memoryLogger } from '../helpers/memory-logger';
import { MemoryRecords, type RecordWrite } from '../helpers/memory-records';
import { MemoryS3 } from '../helpers/memory-s3';

/** One S3 write, as the memory S3 saw it: the key below the prefix and the condition it carried. */
export interface NodeWrite {
  key: string;
  condition: 'if-match' | 'if-none-match' | null;
}

/** What node-1 wrote: S3 objects, and items of the control table (the lease). */
export interface NodeWrites {
  s3: NodeWrite[];
  table: RecordWrite[];
}

const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 2 },
];
const DAY = 86_400_000;
const quiet: TaskEvents = {
  resumed: () => undefined,
  progress: () => undefined,
  checkpointed: () => undefined,
  done: () => undefined,
};

/**
 * The writes node-1's own code makes through a busy stretch, on the memory S3: it finds no
 * lease and takes it, then renews it; runs a fresh task and a repeated one (whose stage output
 * an older epoch wrote); syncs a manifest it finds damaged, with an old completion to archive;
 * and sends a heartbeat. The node code is the real one: a write added to it shows up here.
 */
export const nodeWrites = async (): Promise<NodeWrites> => {
  const s3 = new MemoryS3();
  const sqs = mockClient(SQSClient);
  sqs.on(DeleteMessageCommand).resolves({});
  try {
    const log = memoryLogger().log;
    const config = {
      ...buildConfig({}, { nodes: NODES }),
      nodeName: 'node-1',
      dataDir: mkdtempSync(join(tmpdir(), 'qf-writes-')),
    };
    const table = new MemoryRecords();
    const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
      bucket: 'b',
      prefix: 'peer-sync/',
      maxObjectBytes: 1 << 20,
      requestRetry: { attempts: 1, baseMs: 1, capMs: 1 },
      records: { owns: inTable, store: table },
    });

    let t = 1_000_000;
    const keeper = new LeaseKeeper({ config, store, log, ready: () => true, clock: () => t });
    const leader = (): Leader | undefined => {
      const text = table.items.get(KEYS.leader)?.text;
      return text === undefined ? undefined : (JSON.parse(text) as Leader);
    };
    for (let i = 0; i < 1000 && (leader()?.renewals ?? 0) < 1; i++) {
      t += Math.max(1, keeper.nextDelayMs());
      await keeper.round();
    }
    const epoch = leader()?.epoch ?? 0;

    const runner = new TaskRunner({
      config,
      store,
      queue: new TaskQueue(new SQSClient({ region: 'us-west-2' }), 'http://q'),
      log,
      now: () => 5 * DAY,
      guard: () => undefined,
      deadline: () => new AbortController().signal,
    });
    const message = { id: 'm-1', receiptHandle: 'rh-1', body: '', receiveCount: 1 };
    const signals = (): [AbortSignal, AbortSignal] => [new AbortController().signal, new AbortController().signal];
    await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, epoch, ...signals(), quiet);
    s3.set(`peer-sync/${KEYS.output('t2', 'transcode')}`, {
      taskId: 't2',
      stage: 'transcode',
      node: 'node-2',
      epoch: 0,
    });
    await runner.run({ taskId: 't2', workSeconds: 0.02 }, message, epoch, ...signals(), quiet);

    s3.set(`peer-sync/${KEYS.manifest}`, '{ damaged');
    const tasks = {
      old: { status: 'done' as const, stages: 4, progress: 4, epoch, done: { node: 'node-1', epoch, at: DAY } },
      live: { status: 'running' as const, stages: 1, progress: 2, epoch, done: null },
    };
    const sync = new PeerSync({
      store,
      log,
      localChanges: () => Promise.resolve(tasks),
      now: () => 10 * DAY,
      retentionMs: 7 * DAY,
    });
    await sync.round();
    await sync.round();

    const agent = new Agent({ config, store, queue: null, log, now: () => 10 * DAY, alerts: null, trigger: null });
    await agent.sampleOnce();
    await agent.close();

    return {
      s3: s3.puts.map((p) => ({ key: p.key.slice('peer-sync/'.length), condition: p.condition })),
      table: table.writes,
    };
  } finally {
    sqs.restore();
    s3.restore();
  }
};
