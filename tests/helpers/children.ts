import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { CloudEndpoints } from '../../lib/harness/localcloud/cloud';

export const ROOT = join(__dirname, '..', '..');
const live = new Set<ChildProcess>();

/** Spawns a child that `killAll` (run in afterAll/afterEach) is sure to stop, even on failure. */
export const track = (command: string, args: string[], options: SpawnOptions = {}): ChildProcess => {
  const child = spawn(command, args, { cwd: ROOT, ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
};

/** SIGTERM every tracked child, then SIGKILL what is left after `graceMs`. */
export const killAll = async (graceMs = 5000): Promise<void> => {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
};

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `fleet …` to completion. */
export const runFleet = (
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv = {},
  cwd: string = ROOT,
): Promise<RunResult> =>
  new Promise((resolve) => {
    const child = track(process.execPath, [join(ROOT, 'bin/fleet.js'), ...args], {
      cwd,
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });

export interface LocalCloudInfo extends CloudEndpoints {
  startMs: number;
  child: ChildProcess;
}

/**
 * Starts the local cloud in a child process (fauxqs is an ES module jest cannot load), with
 * every faithful behaviour on; `args` such as `--time-scale 600` compress AWS's durations.
 */
export const startCloudProcess = async (args: string[] = []): Promise<LocalCloudInfo> => {
  const child = track(process.execPath, ['--import', 'tsx', join(ROOT, 'lib/harness/localcloud/serve.ts'), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`local cloud exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as Omit<LocalCloudInfo, 'child'>), child };
};

/** A local cloud (every behaviour off) whose caller faults the test sets: tests/helpers/cloud-control.ts. */
export interface ControlledCloud extends LocalCloudInfo {
  /** Sends one command and resolves with its answer. */
  control: (command: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export const startControlledCloud = async (): Promise<ControlledCloud> => {
  const script = join(ROOT, 'tests/helpers/cloud-control.ts');
  const child = track(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`the controlled cloud exited (${String(child.exitCode)})`);
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const info = (await next()) as unknown as Omit<LocalCloudInfo, 'child'>;
  const control = async (command: Record<string, unknown>): Promise<Record<string, unknown>> => {
    child.stdin?.write(`${JSON.stringify(command)}\n`);
    return next();
  };
  return { ...info, child, control };
};

/** Processes whose command line mentions `marker` (to prove nothing was left behind). */
export const processesMatching = (marker: string): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
