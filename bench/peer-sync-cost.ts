/**
 * What one peer-sync round costs, by the number of live tasks and by how much changed: requests,
 * bytes up and down, and the agent's CPU milliseconds (median of 5 rounds), against the local
 * cloud running in its own process (so its CPU is not counted). The tasks go the real way: the
 * worker's TaskBook records and flushes them to the journal (its CPU per flush is printed too),
 * and the round reads them through the agent's feed (registry.json, then the journal's news).
 * Each size starts with a few warm-up rounds (the agent runs for months; its code is compiled by
 * then). Targets, at 100,000 live tasks: a quiet round ≤ 5 ms, a 10-change round ≤ 50 ms.
 * Run: npx tsx bench/peer-sync-cost.ts [--write]
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Table from 'cli-table3';
import pino from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PeerSync, type RoundStats } from '../agent/peer-sync';
import { localTaskFeed } from '../agent/task-journal';
import { TaskBook } from '../agent/worker/task-book';
import { ClientFactory } from '../lib/aws/clients';
import { StateStore } from '../lib/aws/state-store';
import { recorded } from './record';

const SIZES = [1_000, 10_000, 100_000];
const CHANGES = [0, 10, 1_000];

const startCloud = async (): Promise<{ endpoint: string; bucket: string; stop: () => void }> => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'lib/harness/localcloud/serve.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const info = JSON.parse(line) as { endpoint: string; bucket: string };
  return { ...info, stop: () => child.kill('SIGTERM') };
};

const TARGET_MS: Record<number, number> = { 0: 5, 10: 50 };
const ROUNDS = 5;
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

const main = async (): Promise<void> => {
  const cloud = await startCloud();
  const log = pino({ level: 'silent' });
  const table = new Table({
    head: [
      'tasks',
      'changed',
      'GET',
      'PUT',
      'LIST',
      'KiB up',
      'KiB down',
      'agent CPU ms',
      'worker CPU ms per flush',
      'target',
    ],
  });
  try {
    for (const size of SIZES) {
      const dataDir = mkdtempSync(join(tmpdir(), 'qf-peer-sync-bench-'));
      const book = new TaskBook(dataDir, log);
      await book.load(Date.now(), 30 * 86_400_000);
      for (let i = 0; i < size; i++) book.record(`task-${i}`, { status: 'running', stages: 1, progress: 10, epoch: 1 });
      await book.flush([]);
      // The S3 client as the agent builds it (lib/aws/clients.ts), so its settings are measured too.
      const clients = new ClientFactory(
        { region: 'us-west-2', endpoint: cloud.endpoint, credentials: { accessKeyId: 'bench', secretAccessKey: 'x' } },
        {},
      );
      const store = new StateStore(clients.s3(), {
        bucket: cloud.bucket,
        prefix: `bench-${size}/`,
        maxObjectBytes: 8 << 20,
      });
      const sync = new PeerSync({
        store,
        log,
        localChanges: localTaskFeed(dataDir, log),
        now: Date.now,
        retentionMs: 7 * 86_400_000,
      });
      await sync.round();
      await sync.round();
      // The agent is a long-running process: its code is warm by the time a round matters.
      let progress = 10;
      for (let warm = 0; warm < 5; warm++) {
        progress++;
        for (let i = 0; i < 10; i++) book.record(`task-${(i * 7919) % size}`, { progress });
        await book.flush([]);
        await sync.round();
      }
      for (const changed of CHANGES) {
        const agent: number[] = [];
        const worker: number[] = [];
        let r: RoundStats | undefined;
        for (let round = 0; round < ROUNDS; round++) {
          progress++;
          const w = process.cpuUsage();
          for (let i = 0; i < changed; i++) book.record(`task-${(i * 7919) % size}`, { progress });
          await book.flush([]);
          worker.push(cpuMs(w));
          const a = process.cpuUsage();
          r = await sync.round();
          agent.push(cpuMs(a));
        }
        if (r === undefined) continue;
        const ms = median(agent);
        const target = size === 100_000 ? TARGET_MS[changed] : undefined;
        table.push([
          size,
          changed,
          r.requests.GET,
          r.requests.PUT,
          r.requests.LIST,
          (r.bytesUp / 1024).toFixed(1),
          (r.bytesDown / 1024).toFixed(1),
          ms.toFixed(1),
          median(worker).toFixed(1),
          target === undefined ? '' : `${ms <= target ? 'ok' : 'OVER'} (≤ ${target})`,
        ]);
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    cloud.stop();
  }
  console.log(table.toString());
};

void recorded('peer-sync-cost', 'What a peer-sync round costs (peer-sync-cost)', main);
