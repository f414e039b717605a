import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProc } from '../../agent/proc';
import { proofPath, registryPath, workerPidPath, writeJsonAtomic } from '../../agent/registry';
import { bootId } from '../../agent/runtime/boot';
import { mono } from '../../agent/runtime/clock';
import { Sampler } from '../../agent/sampler';
import type { StoreName } from '../../lib/core/schemas';
import { killAll, track } from '../helpers/children';

const NOW = 1_800_000_000_000;

describe('Sampler', () => {
  let dir: string;
  const sampler = (backlog: number | null = 4, unreachable: StoreName[] = []): Sampler =>
    new Sampler({
      dataDir: dir,
      completionWindowMs: 300_000,
      now: () => NOW,
      backlog: () => Promise.resolve(backlog),
      epoch: () => 3,
      mayConsume: () => true,
      unreachable: () => unreachable,
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-sampler-'));
  });
  afterAll(() => killAll());

  it('counts no worker when there is no pid file', async () => {
    expect((await sampler().take()).workerProcesses).toBe(0);
  });

  it('finds a live worker through its pid file, also while it is stopped', async () => {
    const child = track(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((r) => setTimeout(r, 200));
    const info = await readProc(child.pid!);
    await writeJsonAtomic(workerPidPath(dir), { pid: child.pid, startTicks: info!.startTicks });
    const s = sampler();
    // The worker is named by its pid and start time, so a restarted one is told apart.
    expect(await s.take()).toMatchObject({
      workerProcesses: 1,
      backlog: 4,
      epochSeen: 3,
      worker: `${child.pid}:${info!.startTicks}`,
    });
    child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 100));
    expect((await readProc(child.pid!))?.state).toBe('T');
    expect((await s.take()).workerProcesses).toBe(1);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await s.take()).toMatchObject({ workerProcesses: 0, worker: null });
  });

  it(
    'reports the age of the worker’s last passing self-test, ' + 'and none for a failed one or one from another boot',
    async () => {
      expect((await sampler().take()).proofAgeMs).toBeNull();
      await writeJsonAtomic(proofPath(dir), { boot: bootId(), at: mono() - 5_000, ok: true });
      const age = (await sampler().take()).proofAgeMs;
      expect(age).toBeGreaterThanOrEqual(5_000);
      expect(age).toBeLessThan(10_000);
      await writeJsonAtomic(proofPath(dir), {
        boot: bootId(),
        at: mono(),
        ok: false,
        detail: 'stage transcode exited with 1',
      });
      expect((await sampler().take()).proofAgeMs).toBeNull();
      await writeJsonAtomic(proofPath(dir), { boot: `not-${bootId()}`, at: mono(), ok: true });
      expect((await sampler().take()).proofAgeMs).toBeNull();
    },
  );

  it(
    'counts a self-test only for the worker that ran it while that worker runs: ' +
      'a proof from one that has exited says nothing of the next',
    async () => {
      const child = track(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
      await new Promise((r) => setTimeout(r, 200));
      const info = await readProc(child.pid!);
      await writeJsonAtomic(workerPidPath(dir), { pid: child.pid, startTicks: info!.startTicks });
      const s = sampler();
      // Written by the worker before it (stopped by a restart, it finished a self-test on its way out).
      await writeJsonAtomic(proofPath(dir), {
        boot: bootId(),
        at: mono(),
        ok: true,
        worker: `${child.pid! + 1}:${info!.startTicks}`,
      });
      expect((await s.take()).proofAgeMs).toBeNull();
      // The running worker's own proof counts.
      await writeJsonAtomic(proofPath(dir), {
        boot: bootId(),
        at: mono(),
        ok: true,
        worker: `${child.pid}:${info!.startTicks}`,
      });
      expect((await s.take()).proofAgeMs).not.toBeNull();
      // Once it has exited, its proof no longer counts either.
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      expect((await s.take()).proofAgeMs).toBeNull();
    },
  );

  it('does not mistake a reused pid for the worker', async () => {
    await writeJsonAtomic(workerPidPath(dir), { pid: process.pid, startTicks: 1 });
    expect(await sampler().take()).toMatchObject({ workerProcesses: 0, worker: null });
  });

  it('reports registry progress and completions inside the window only', async () => {
    await writeJsonAtomic(registryPath(dir), {
      version: 1,
      completedTotal: 9,
      recentCompletions: [NOW - 400_000, NOW - 200_000, NOW - 1000],
      inFlight: [{ taskId: 'task-0001', progress: 12, stage: 'titling' }],
    });
    expect(await sampler().take()).toMatchObject({
      completedTotal: 9,
      completionsInWindow: 2,
      inFlight: [{ taskId: 'task-0001', progress: 12 }],
    });
  });

  it(
    'says which stores it could not reach, by the agent and by the ' +
      'worker waiting out an outage, and nothing when it reaches them all',
    async () => {
      await writeJsonAtomic(registryPath(dir), {
        version: 1,
        completedTotal: 0,
        recentCompletions: [],
        inFlight: [],
        unreachable: ['s3'],
      });
      expect((await sampler(4, ['dynamodb']).take()).unreachable).toEqual(['s3', 'dynamodb']);
      await writeJsonAtomic(registryPath(dir), { version: 1, completedTotal: 0, recentCompletions: [], inFlight: [] });
      expect(await sampler().take()).not.toHaveProperty('unreachable');
    },
  );

  it('treats a torn registry as empty for one sample instead of failing', async () => {
    await writeJsonAtomic(registryPath(dir), { version: 1, completedTotal: 'x' });
    expect(await sampler().take()).toMatchObject({ completedTotal: 0, inFlight: [] });
  });
});
