import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundles } from '../../../../lib/harness/localcloud/bundle';
import type { HostEvent, HostRequest } from '../../../../lib/harness/localcloud/host-protocol';

/** A worker whose take-up takes 400 ms (longer than the old fixed freeze delay allowed), then says so and waits for the go-ahead. */
const SLOW_START_WORKER = `
const fs = require('node:fs');
const dir = process.env.FLEET_DATA_DIR;
setTimeout(() => {
  fs.writeFileSync(dir + '/took-up', String(process.pid));
  // As the worker does (passHostGate): say so, and go on at the host's go-ahead.
  process.on('message', (m) => m.type === 'go' && fs.writeFileSync(dir + '/went-' + process.pid, 'go'));
  process.send({ type: 'taken-up' });
}, 400);
`;
const IDLE_AGENT = 'setInterval(() => {}, 1000);';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, ok: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
};

describe('the local node host', () => {
  let dir: string;
  let host: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-node-host-'));
  });
  afterEach(() => {
    // The host leads its own process group: take the group down, whatever the test left.
    if (host?.pid !== undefined) {
      try {
        process.kill(-host.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('freezes each new worker of a lasting stall once it says it took up its predecessor’s messages, not at a fixed time after its start', async () => {
    const bundles = await buildBundles(join(dir, 'bundles'));
    writeFileSync(join(dir, 'worker.js'), SLOW_START_WORKER);
    writeFileSync(join(dir, 'agent.js'), IDLE_AGENT);
    const events: HostEvent[] = [];
    host = fork(bundles.nodeHost, [], {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: { PATH: process.env.PATH, FLEET_DATA_DIR: dir, QF_AGENT_BUNDLE: join(dir, 'agent.js'), QF_WORKER_BUNDLE: join(dir, 'worker.js'), QF_RESTART_MS: '100', QF_STOP_TIMEOUT_MS: '2000' },
    });
    host.on('message', (e: HostEvent) => events.push(e));
    const tell = (r: HostRequest): void => void host?.send(r);
    const started = (): number[] => events.flatMap((e) => (e.type === 'worker-started' ? [e.pid] : []));
    const went = (pid: number): string | null => (existsSync(join(dir, `went-${pid}`)) ? readFileSync(join(dir, `went-${pid}`), 'utf8') : null);
    await until('the first worker', () => started().length === 1);
    // Without a stall the host lets a worker go on at once.
    await until('the first worker to go on', () => went(started()[0]) !== null);
    tell({ type: 'stall-workers', on: true });
    tell({ type: 'command', id: 1, command: 'restart-worker' });
    await until('the next worker', () => started().length === 2);
    const next = started()[1];
    // It finished its start (400 ms) before it was frozen ...
    await until('the next worker to finish its start', () => existsSync(join(dir, 'took-up')) && readFileSync(join(dir, 'took-up'), 'utf8') === String(next));
    // ... and was frozen before it went on ...
    await sleep(1_500);
    expect(went(next)).toBeNull();
    // ... with the go-ahead waiting for it: continued, it goes on.
    tell({ type: 'stall-workers', on: false });
    tell({ type: 'signal-worker', signal: 'SIGCONT' });
    await until('the continued worker to go on', () => went(next) !== null);
  }, 30_000);
});
