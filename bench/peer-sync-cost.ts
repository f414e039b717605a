/**
 * What one peer-sync round costs, by registry size and by how much changed: requests, bytes
 * up and down, and the agent's CPU milliseconds, against the local cloud running in its own
 * process (so its CPU is not counted). Run: npx tsx bench/peer-sync-cost.ts
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { S3Client } from '@aws-sdk/client-s3';
import Table from 'cli-table3';
import pino from 'pino';
import { PeerSync, type RoundStats } from '../agent/peer-sync';
import { StateStore } from '../lib/aws/state-store';
import type { TaskEntry } from '../lib/core/sync/manifest';

const SIZES = [1_000, 10_000, 100_000];
const CHANGES = [0, 10, 1_000];

const startCloud = async (): Promise<{ endpoint: string; bucket: string; stop: () => void }> => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'lib/harness/localcloud/serve.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const info = JSON.parse(line) as { endpoint: string; bucket: string };
  return { ...info, stop: () => child.kill('SIGTERM') };
};

const main = async (): Promise<void> => {
  const cloud = await startCloud();
  const table = new Table({ head: ['tasks', 'changed', 'GET', 'PUT', 'LIST', 'KiB up', 'KiB down', 'agent CPU ms'] });
  try {
    for (const size of SIZES) {
      const tasks: Record<string, TaskEntry> = {};
      for (let i = 0; i < size; i++) tasks[`task-${i}`] = { status: 'running', stages: 1, progress: 10, epoch: 1, done: null };
      const store = new StateStore(new S3Client({ region: 'us-west-2', endpoint: cloud.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'bench', secretAccessKey: 'x' } }), {
        bucket: cloud.bucket,
        prefix: `bench-${size}/`,
        maxObjectBytes: 8 << 20,
      });
      const sync = new PeerSync({ store, log: pino({ level: 'silent' }), localTasks: () => Promise.resolve(tasks), now: Date.now, retentionMs: 7 * 86_400_000 });
      await sync.round();
      await sync.round();
      for (const changed of CHANGES) {
        for (let i = 0; i < changed; i++) {
          const id = `task-${(i * 7919) % size}`;
          const t = tasks[id];
          if (t !== undefined) tasks[id] = { ...t, progress: t.progress + 1 };
        }
        const cpu = process.cpuUsage();
        const r: RoundStats = await sync.round();
        const used = process.cpuUsage(cpu);
        table.push([size, changed, r.requests.GET, r.requests.PUT, r.requests.LIST, (r.bytesUp / 1024).toFixed(1), (r.bytesDown / 1024).toFixed(1), ((used.user + used.system) / 1000).toFixed(0)]);
      }
    }
  } finally {
    cloud.stop();
  }
  console.log(table.toString());
};

void main();
