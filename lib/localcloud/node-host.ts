import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { describeExit, killGroup, stopChild } from './spawn';
import type { HostEvent, HostRequest } from './host-protocol';

/**
 * One local node: a process-group leader that runs the agent and the worker like systemd
 * would (`Restart=always` with a restart delay) and answers the SSM fake's commands. If the
 * fleet that started it goes away, it takes its whole group down with it.
 */
const env = process.env;
const agentBundle = env.QF_AGENT_BUNDLE ?? '';
const workerBundle = env.QF_WORKER_BUNDLE ?? '';
const dataDir = env.FLEET_DATA_DIR ?? '.';
const restartMs = Number(env.QF_RESTART_MS ?? '1000');
const stopTimeoutMs = Number(env.QF_STOP_TIMEOUT_MS ?? '5000');

const send = (event: HostEvent): void => {
  if (process.connected) process.send?.(event);
};

const childEnv = { ...env };
delete childEnv.QF_AGENT_BUNDLE;
delete childEnv.QF_WORKER_BUNDLE;
delete childEnv.QF_RESTART_MS;
delete childEnv.QF_STOP_TIMEOUT_MS;

const run = (bundle: string, log: string): ChildProcess => {
  const out = openSync(`${dataDir}/${log}`, 'a');
  return spawn(process.execPath, [bundle], { env: childEnv, stdio: ['ignore', out, out] });
};

let shuttingDown = false;
let worker: ChildProcess | undefined;
let workerRestarts = 0;
/** Set while a planned stop (restart, shutdown) is under way: no automatic restart then. */
let planned = false;
let restartTimer: NodeJS.Timeout | undefined;

const startWorker = (): void => {
  if (shuttingDown) return;
  const child = run(workerBundle, 'worker.log');
  worker = child;
  send({ type: 'worker-started', pid: child.pid ?? 0, restarts: workerRestarts });
  child.once('exit', (code, signal) => {
    send({ type: 'worker-exited', pid: child.pid ?? 0, how: describeExit(code, signal), planned });
    if (worker === child) worker = undefined;
    if (!planned && !shuttingDown) {
      workerRestarts++;
      restartTimer = setTimeout(startWorker, restartMs);
    }
  });
};

let agent: ChildProcess | undefined;
const startAgent = (): void => {
  if (shuttingDown) return;
  const child = run(agentBundle, 'agent.log');
  agent = child;
  send({ type: 'agent-started', pid: child.pid ?? 0 });
  child.once('exit', (code, signal) => {
    send({ type: 'agent-exited', pid: child.pid ?? 0, how: describeExit(code, signal) });
    if (!shuttingDown) setTimeout(startAgent, restartMs);
  });
};

/** `systemctl restart queen-fleet-worker`: stop (TERM, CONT, then KILL), then start. */
const restartWorker = async (): Promise<void> => {
  planned = true;
  clearTimeout(restartTimer);
  if (worker !== undefined) await stopChild(worker, stopTimeoutMs);
  planned = false;
  startWorker();
};

const shutdown = async (): Promise<void> => {
  if (shuttingDown) return;
  shuttingDown = true;
  planned = true;
  clearTimeout(restartTimer);
  await Promise.all([worker, agent].map((c) => (c === undefined ? Promise.resolve() : stopChild(c, stopTimeoutMs))));
  process.exit(0);
};

process.on('message', (raw: HostRequest) => {
  switch (raw.type) {
    case 'restart-worker':
      restartWorker().then(
        () => send({ type: 'command-done', id: raw.id, ok: true, output: 'worker restarted' }),
        (error: unknown) => send({ type: 'command-done', id: raw.id, ok: false, output: String(error) }),
      );
      return;
    case 'signal-worker':
      worker?.kill(raw.signal);
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

startAgent();
startWorker();
