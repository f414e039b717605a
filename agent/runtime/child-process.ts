import type { ChildProcess } from 'node:child_process';

/**
 * Stopping child processes, for every place that starts them (the worker's stage commands and
 * the local fleet's node services): SIGTERM, SIGCONT, then SIGKILL after a grace period.
 */

/** Describes how a process ended, for people. */
export const describeExit = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal !== null ? `killed by ${signal}` : code === 0 ? 'exited cleanly' : `exited with code ${code ?? '?'}`;

/** Resolves when the child has exited (at once if it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));

/**
 * Stops a child like systemd does: SIGTERM followed by SIGCONT (a stopped process must run to
 * handle it), then SIGKILL after `timeoutMs`. Resolves once the child is gone.
 */
export const stopChild = async (child: ChildProcess, timeoutMs: number): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  child.kill('SIGCONT');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited(child);
  clearTimeout(timer);
};

/** Signals a whole process group; a group already gone is not an error. */
export const killGroup = (pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
};

/**
 * Stops a process group like systemd stops a unit: SIGTERM and SIGCONT (a stopped process must
 * run to handle SIGTERM), then SIGKILL after `graceMs`. Returns a function that cancels the
 * pending SIGKILL, for when the group's leader exited in time.
 */
export const stopGroup = (pid: number | undefined, graceMs: number): (() => void) => {
  killGroup(pid, 'SIGTERM');
  killGroup(pid, 'SIGCONT');
  const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
  return () => clearTimeout(timer);
};
