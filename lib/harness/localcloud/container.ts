import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { z } from 'zod';
import { NODE_COMMANDS, type NodeCommand } from '../../aws/run-command';
import type { Machines, MachineView } from './fakes';

/**
 * A node that is a real machine with systemd: a container booted by `systemd-nspawn -b`
 * (tests/system/systemd-node.test.ts). The SSM fake runs its allow-listed commands inside it,
 * through `nsenter` into the namespaces of the container's init, so `systemctl restart
 * queen-fleet-worker` reaches the real unit. This module is also how the tests run anything
 * inside the container: one place that spawns into it.
 */

/**
 * Each fixed node command as the argv run inside the container: no shell, nothing interpolated.
 * Typed by `NodeCommand`, so a command added to the allow-list must be added here too.
 */
const ARGV: Readonly<Record<NodeCommand, readonly string[]>> = {
  restartWorker: ['systemctl', 'restart', 'queen-fleet-worker'],
  stopWorker: ['systemctl', 'stop', 'queen-fleet-worker'],
  startWorker: ['systemctl', 'start', 'queen-fleet-worker'],
  restartAgent: ['systemctl', 'restart', 'queen-fleet-peer-sync'],
};
const COMMAND_ARGV: ReadonlyMap<string, readonly string[]> = new Map(
  (Object.keys(NODE_COMMANDS) as NodeCommand[]).map((k) => [NODE_COMMANDS[k], ARGV[k]]),
);

/** The argv a fixed SSM command string runs as, or undefined for anything not allow-listed. */
export const containerArgv = (command: string): readonly string[] | undefined => COMMAND_ARGV.get(command);

/** The parent pid of `pid`, from /proc/PID/stat (the command name may hold spaces and parentheses). */
const parentOf = (pid: number, procRoot: string): number | null => {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
};

/** The pid of `pid` in each pid namespace it belongs to, outermost first (the `NSpid` line). */
const nsPids = (pid: number, procRoot: string): number[] => {
  try {
    const line = /^NSpid:\s+(.*)$/m.exec(readFileSync(`${procRoot}/${pid}/status`, 'utf8'))?.[1] ?? '';
    return line.trim().split(/\s+/).map(Number);
  } catch {
    return [];
  }
};

const numericEntries = (procRoot: string): number[] => {
  try {
    return readdirSync(procRoot)
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
};

/**
 * The container's init as the host sees it: the child of the nspawn process that is pid 1 of
 * its own pid namespace. Null while there is none (booting, rebooting, powered off).
 */
export const containerInit = (nspawnPid: number, procRoot = '/proc'): number | null => {
  for (const pid of numericEntries(procRoot)) {
    if (parentOf(pid, procRoot) !== nspawnPid) continue;
    const ids = nsPids(pid, procRoot);
    if (ids.length > 1 && ids.at(-1) === 1) return pid;
  }
  return null;
};

/** The host pid of the process that is `nsPid` inside the pid namespace of `init`, or null. */
export const hostPid = (init: number, nsPid: number, procRoot = '/proc'): number | null => {
  let ns: string;
  try {
    ns = readlinkSync(`${procRoot}/${init}/ns/pid`);
  } catch {
    return null;
  }
  for (const pid of numericEntries(procRoot)) {
    if (nsPids(pid, procRoot).at(-1) !== nsPid) continue;
    try {
      if (readlinkSync(`${procRoot}/${pid}/ns/pid`) === ns) return pid;
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
};

/** How a command run inside the container ended. */
export interface ContainerRun {
  /** Exit code; null when it was killed (its timeout) or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `argv` inside the container whose init is `init`: its mount, UTS, IPC, network and pid
 * namespaces (the root and working directory become the container's), with a plain
 * environment, so nothing of the caller's leaks in. Killed after `timeoutMs`.
 */
export const runInContainer = (init: number, argv: readonly string[], timeoutMs: number): Promise<ContainerRun> =>
  new Promise((resolve) => {
    const args = ['-t', String(init), '-m', '-u', '-i', '-n', '-p', '--', ...argv];
    execFile(
      'nsenter',
      args,
      {
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 << 20,
        env: {
          PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          LANG: 'C.UTF-8',
          SYSTEMD_COLORS: '0',
        },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr: error !== null && code === null ? `${stderr}${error.message}` : stderr });
      },
    );
  });

/** `--container` of serve.ts: which node the container is and where its nspawn pid is written. */
export const containerNodeSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  instanceId: z.string().regex(/^mi-[0-9a-f]{17}$/),
  /** A file holding the pid of the running systemd-nspawn; absent or stale while the machine is off. */
  pidFile: z.string().min(1),
});
export type ContainerNode = z.output<typeof containerNodeSchema>;

/** Longest an SSM command may run inside: a restart waits for the worker's drain (TimeoutStopSec=45). */
const COMMAND_TIMEOUT_MS = 120_000;

/**
 * The container as the SSM and Lightsail fakes see it: `running` while nspawn runs, reachable
 * while its init exists. The init is looked up again only when the one found last is gone,
 * because the SSM fake asks every 20 ms.
 */
export class ContainerMachine implements Machines {
  private cached: { nspawn: number; init: number } | null = null;

  constructor(private readonly node: ContainerNode) {}

  private nspawnPid(): number | null {
    try {
      const pid = Number(readFileSync(this.node.pidFile, 'utf8').trim());
      return Number.isInteger(pid) && pid > 0 && parentOf(pid, '/proc') !== null ? pid : null;
    } catch {
      return null;
    }
  }

  /** The container's init now, or null while it has none. */
  init(): number | null {
    const c = this.cached;
    if (c !== null && parentOf(c.init, '/proc') === c.nspawn) return c.init;
    this.cached = null;
    const nspawn = this.nspawnPid();
    const init = nspawn === null ? null : containerInit(nspawn);
    if (nspawn !== null && init !== null) this.cached = { nspawn, init };
    return init;
  }

  list(): MachineView[] {
    const { name, instanceId } = this.node;
    return [
      {
        instanceId,
        name,
        lightsailName: `queen-fleet-${name}`,
        lightsailState: this.nspawnPid() === null ? 'stopped' : 'running',
        reachable: this.init() !== null,
      },
    ];
  }

  async run(instanceId: string, command: string): Promise<{ ok: boolean; output: string }> {
    const argv = containerArgv(command);
    if (instanceId !== this.node.instanceId) return { ok: false, output: 'no such instance' };
    if (argv === undefined) return { ok: false, output: `unknown command ${command}` };
    const init = this.init();
    if (init === null) return { ok: false, output: 'the container is not running' };
    const r = await runInContainer(init, argv, COMMAND_TIMEOUT_MS);
    return { ok: r.code === 0, output: `${r.stdout}${r.stderr}`.trim().slice(0, 2000) };
  }
}
