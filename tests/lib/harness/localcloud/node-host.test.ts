import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundles, bundleEntries } from '../../../../lib/harness/localcloud/bundle';
import type { HostEvent, HostRequest } from '../../../../lib/harness/localcloud/host-protocol';

/**
 * A worker whose take-up takes 400 ms (longer than the old fixed
 * freeze delay allowed), then says so and waits for the go-ahead.
 */
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

/** A unit that reports its clocks every 50 ms: Date.now, the agent's wall and mono, and `new Date()` (never moved). */
const CLOCK_PROBE = (clock: string): string => `
import { writeFileSync } from 'node:fs';
import { listenForClockSkew, mono, wall } from ${JSON.stringify(clock)};
listenForClockSkew();
setInterval(() => {
  const now = Date.now();
  const report = { now, wall: wall(), mono: mono(), system: new Date().getTime() };
  writeFileSync(process.env.FLEET_DATA_DIR + '/clock-' + process.pid + '.json', JSON.stringify(report));
}, 50);
`;
interface Clocks {
  now: number;
  wall: number;
  mono: number;
  system: number;
}

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

  it(
    'freezes each new worker of a lasting stall once it says it took ' +
      'up its predecessor’s messages, not at a fixed time after its start',
    async () => {
      const bundles = await buildBundles(join(dir, 'bundles'));
      writeFileSync(join(dir, 'worker.js'), SLOW_START_WORKER);
      writeFileSync(join(dir, 'agent.js'), IDLE_AGENT);
      const events: HostEvent[] = [];
      host = fork(bundles.nodeHost, [], {
        detached: true,
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
        env: {
          PATH: process.env.PATH,
          FLEET_DATA_DIR: dir,
          QF_AGENT_BUNDLE: join(dir, 'agent.js'),
          QF_WORKER_BUNDLE: join(dir, 'worker.js'),
          QF_RESTART_MS: '100',
          QF_STOP_TIMEOUT_MS: '2000',
        },
      });
      host.on('message', (e: HostEvent) => events.push(e));
      const tell = (r: HostRequest): void => void host?.send(r);
      const started = (): number[] => events.flatMap((e) => (e.type === 'worker-started' ? [e.pid] : []));
      const went = (pid: number): string | null =>
        existsSync(join(dir, `went-${pid}`)) ? readFileSync(join(dir, `went-${pid}`), 'utf8') : null;
      await until('the first worker', () => started().length === 1);
      // Without a stall the host lets a worker go on at once.
      await until('the first worker to go on', () => went(started()[0]) !== null);
      tell({ type: 'stall-workers', on: true });
      tell({ type: 'command', id: 1, command: 'restart-worker' });
      await until('the next worker', () => started().length === 2);
      const next = started()[1];
      // It finished its start (400 ms) before it was frozen ...
      await until(
        'the next worker to finish its start',
        () => existsSync(join(dir, 'took-up')) && readFileSync(join(dir, 'took-up'), 'utf8') === String(next),
      );
      // ... and was frozen before it went on ...
      await sleep(1_500);
      expect(went(next)).toBeNull();
      // ... with the go-ahead waiting for it: continued, it goes on.
      tell({ type: 'stall-workers', on: false });
      tell({ type: 'signal-worker', signal: 'SIGCONT' });
      await until('the continued worker to go on', () => went(next) !== null);
    },
    30_000,
  );

  it('moves the clock its units sign with (Date.now) when asked, never mono, only under the host', async () => {
    const bundles = await buildBundles(join(dir, 'bundles'));
    writeFileSync(join(dir, 'probe.ts'), CLOCK_PROBE(join(__dirname, '../../../../agent/runtime/clock')));
    const { probe } = await bundleEntries({ probe: join(dir, 'probe.ts') }, join(dir, 'probe'));
    writeFileSync(join(dir, 'agent.js'), IDLE_AGENT);
    const events: HostEvent[] = [];
    host = fork(bundles.nodeHost, [], {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {
        PATH: process.env.PATH,
        FLEET_DATA_DIR: dir,
        QF_AGENT_BUNDLE: join(dir, 'agent.js'),
        QF_WORKER_BUNDLE: probe,
        QF_RESTART_MS: '100',
        QF_STOP_TIMEOUT_MS: '2000',
      },
    });
    host.on('message', (e: HostEvent) => events.push(e));
    const pid = (): number | undefined => events.flatMap((e) => (e.type === 'worker-started' ? [e.pid] : [])).at(-1);
    const clocks = (of: number | undefined): Clocks | null => {
      const file = join(dir, `clock-${of ?? 0}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Clocks) : null;
    };
    const monoNow = (): number => Number(process.hrtime.bigint() / 1_000_000n);
    /** How far a probe's Date.now is from the machine's clock, by its last report. */
    const skew = (of: number | undefined): number => (clocks(of)?.now ?? NaN) - (clocks(of)?.system ?? NaN);
    await until('the probe to report', () => clocks(pid()) !== null);
    host.send({ type: 'clock-offset', offsetMs: 1_200_000 } satisfies HostRequest);
    await until('its clock to move', () => skew(pid()) > 1_100_000);
    const moved = clocks(pid())!;
    expect(moved.now - moved.system).toBeGreaterThan(1_199_000);
    expect(moved.wall - moved.now).toBeLessThan(100);
    // The machine's monotonic clock, shared with this process, is untouched.
    expect(Math.abs(monoNow() - moved.mono)).toBeLessThan(5_000);
    // A worker started during the skew starts skewed; the skew undone, its clock is true again.
    host.send({ type: 'command', id: 1, command: 'restart-worker' } satisfies HostRequest);
    const first = pid();
    await until('the next worker to report skewed', () => pid() !== first && skew(pid()) > 1_100_000);
    host.send({ type: 'clock-offset', offsetMs: 0 } satisfies HostRequest);
    await until('its clock to come back', () => Math.abs(skew(pid())) < 1_000);

    // Another parent (no node host's gate): `wall` alone moves, Date.now stays the machine's.
    const env = { PATH: process.env.PATH, FLEET_DATA_DIR: dir };
    const bare = fork(probe, [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env });
    try {
      await until('the bare probe to report', () => clocks(bare.pid) !== null);
      bare.send({ type: 'clock-offset', offsetMs: 1_200_000 });
      await until('its wall to move', () => (clocks(bare.pid)?.wall ?? 0) - (clocks(bare.pid)?.system ?? 0) > 1e6);
      const seen = clocks(bare.pid)!;
      expect(Math.abs(seen.now - seen.system)).toBeLessThan(1_000);
    } finally {
      bare.kill('SIGKILL');
    }
  }, 60_000);
});
