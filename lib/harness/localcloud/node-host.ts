import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { describeExit, killGroup, stopChild } from '../../../agent/runtime/child-process';
import { HOST_GATE } from '../../../agent/runtime/clock';
import type { HostCommand, HostEvent, HostRequest } from './host-protocol';
import { signalMarked, UNIT_MARK } from './processes';

/**
 * One boot of a local node: a process-group leader that runs the agent and the worker like
 * systemd would (`Restart=always` with a restart delay, `KillMode=mixed`: once a unit's main
 * process is gone, whatever it left behind in its "cgroup" is killed) and answers the SSM
 * fake's commands. If the fleet that started it goes away, it takes its whole group down.
 */
const env = process.env;
const bundles = { agent: env.QF_AGENT_BUNDLE ?? '', worker: env.QF_WORKER_BUNDLE ?? '' };
/** Node's own options for both units (the units' ExecStart flags, from the fleet that starts it). */
const nodeArgs = JSON.parse(env.QF_NODE_ARGS ?? '[]') as string[];
const dataDir = env.FLEET_DATA_DIR ?? '.';
const restartMs = Number(env.QF_RESTART_MS ?? '1000');
const stopTimeoutMs = Number(env.QF_STOP_TIMEOUT_MS ?? '5000');

const send = (event: HostEvent): void => {
  if (process.connected) process.send?.(event);
};

const childEnv = {
  ...Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('QF_'))),
  QUEEN_FLEET_BOOT_ID: env.QF_BOOT_ID ?? '',
};

/** A systemd-like unit: one process, restarted after a crash unless stopped on purpose. */
class Unit {
  child: ChildProcess | undefined;
  restarts = 0;
  /** `systemctl stop` (or a start limit): no automatic restart until started again. */
  private held = false;
  private planned = false;
  private timer: NodeJS.Timeout | undefined;
  clockOffsetMs = 0;
  onStart: ((child: ChildProcess) => void) | undefined;

  constructor(private readonly name: 'agent' | 'worker') {}

  /** What every process of this unit carries in its environment. */
  private get mark(): string {
    return `${dataDir}/${this.name}`;
  }

  start(): void {
    if (shuttingDown || this.child !== undefined) return;
    this.held = false;
    const out = openSync(`${dataDir}/${this.name}.log`, 'a');
    const child = spawn(process.execPath, [...nodeArgs, bundles[this.name]], {
      env: { ...childEnv, [UNIT_MARK]: this.mark, [HOST_GATE]: '1' },
      stdio: ['ignore', out, out, 'ipc'],
    });
    this.child = child;
    child.send({ type: 'clock-offset', offsetMs: this.clockOffsetMs });
    send(
      this.name === 'worker'
        ? { type: 'worker-started', pid: child.pid ?? 0, restarts: this.restarts }
        : { type: 'agent-started', pid: child.pid ?? 0 },
    );
    this.onStart?.(child);
    child.once('exit', (code, signal) => {
      // KillMode=mixed: the unit's leftovers (stage commands in their own process groups) go too.
      signalMarked(UNIT_MARK, this.mark, 'SIGKILL');
      const how = describeExit(code, signal);
      send(
        this.name === 'worker'
          ? { type: 'worker-exited', pid: child.pid ?? 0, how, planned: this.planned }
          : { type: 'agent-exited', pid: child.pid ?? 0, how },
      );
      if (this.child === child) this.child = undefined;
      if (!this.planned && !this.held && !shuttingDown) {
        this.restarts++;
        this.timer = setTimeout(() => this.start(), restartMs);
      }
    });
  }

  /** `systemctl stop`: TERM + CONT, KILL after the timeout; stays down. */
  async stop(): Promise<void> {
    this.held = true;
    this.planned = true;
    clearTimeout(this.timer);
    if (this.child !== undefined) await stopChild(this.child, stopTimeoutMs);
    this.planned = false;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.start();
  }

  /** Killed and kept down, as after systemd's start limit. */
  kill(): void {
    this.held = true;
    clearTimeout(this.timer);
    this.child?.kill('SIGKILL');
  }

  setClockOffset(ms: number): void {
    this.clockOffsetMs = ms;
    if (this.child?.connected === true) this.child.send({ type: 'clock-offset', offsetMs: ms });
  }
}

let shuttingDown = false;
const worker = new Unit('worker');
const agent = new Unit('agent');
let stallWorkers = false;
/**
 * A worker that never says it took up its predecessor's messages (stuck in its start) is frozen
 * this long after its start.
 */
const TAKE_UP_WAIT_MS = 5_000;
worker.onStart = (child): void => {
  // A stall that survives restarts: freeze each new worker once it has taken up what the last
  // one held (carried on with it, or handed it back), before it does anything else. It says so
  // over IPC and waits for the go-ahead (passHostGate in agent/runtime/clock.ts); a stall
  // freezes it before sending that, so it reads it only once continued. A fixed 200 ms after the
  // spawn froze some mid-way on a loaded machine (their predecessors' messages kept with a stale
  // visibility: a CI run saw a task wait 491 s), and a freeze that came after the worker had
  // gone on (its wait had a 1 s limit) let some pass a self-test first (a stalled node counted ready).
  let decided = false;
  const freeze = (): void => {
    decided = true;
    // The stall may have cleared while this worker started.
    if (stallWorkers && child.exitCode === null && child.signalCode === null) child.kill('SIGSTOP');
  };
  const timer = setTimeout(() => {
    if (!decided) freeze();
  }, TAKE_UP_WAIT_MS);
  child.on('message', (m: { type?: string }) => {
    if (m.type !== 'taken-up') return;
    clearTimeout(timer);
    if (!decided) freeze();
    // Always answered, and after the freeze: the stopped worker reads it only once continued.
    // (One frozen by the fallback above says it took up later, once continued.)
    if (child.connected) child.send({ type: 'go', step: 'taken-up' });
  });
  child.once('exit', () => clearTimeout(timer));
};

const COMMANDS: Record<HostCommand, () => Promise<void>> = {
  'restart-worker': () => worker.restart(),
  'stop-worker': () => worker.stop(),
  'start-worker': () => {
    worker.start();
    return Promise.resolve();
  },
  'restart-agent': () => agent.restart(),
};

const shutdown = async (): Promise<void> => {
  if (shuttingDown) return;
  shuttingDown = true;
  await Promise.all([worker.stop(), agent.stop()]);
  process.exit(0);
};

process.on('message', (raw: HostRequest) => {
  switch (raw.type) {
    case 'command':
      COMMANDS[raw.command]().then(
        () => send({ type: 'command-done', id: raw.id, ok: true, output: `${raw.command} done` }),
        (error: unknown) => send({ type: 'command-done', id: raw.id, ok: false, output: String(error) }),
      );
      return;
    case 'signal-worker':
      worker.child?.kill(raw.signal);
      return;
    case 'stall-workers':
      stallWorkers = raw.on;
      return;
    case 'kill-agent':
      agent.kill();
      return;
    case 'start-agent':
      agent.start();
      return;
    case 'clock-offset':
      worker.setClockOffset(raw.offsetMs);
      agent.setClockOffset(raw.offsetMs);
      return;
    case 'shutdown':
      void shutdown();
      return;
  }
});

// The fleet is gone (it exited or was killed): leave nothing behind.
process.on('disconnect', () => {
  if (!shuttingDown) killGroup(process.pid);
});
process.on('SIGTERM', () => void shutdown());

agent.start();
worker.start();
