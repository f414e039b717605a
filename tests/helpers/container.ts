import { spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exited, killGroup } from '../../agent/runtime/child-process';
import { containerInit, hostPid, runInContainer, type ContainerRun } from '../../lib/harness/localcloud/container';
import { sleep } from '../../lib/sleep';
import { ROOT, track } from './children';

/** Builds the cached Debian root once per machine and prints its path. */
export const ROOTFS_SCRIPT = join(ROOT, 'tests/helpers/container-rootfs.sh');

/**
 * The environment of every systemd-nspawn: this kind of host mounts only the legacy (v1) cgroup
 * hierarchy and its PID 1 is not systemd, so nspawn must hand the container a legacy hierarchy
 * too; with the unified one the container's systemd cannot set up its cgroups.
 */
const NSPAWN_ENV = { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '0' };

export type Support = { ok: true; rootfs: string } | { ok: false; reason: string };

/**
 * Can this machine boot the node container? Decided once, when the test file loads, so a test
 * that cannot run is skipped with its reason instead of passing: root, systemd-nspawn and
 * nsenter, the cached Debian root (built here on the first run: debootstrap, a minute or two),
 * and a container that runs one command.
 */
export const containerSupport = (): Support => {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not root: systemd-nspawn and nsenter need root' };
  for (const tool of ['systemd-nspawn', 'nsenter']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0)
      return { ok: false, reason: `${tool} is not installed (apt-get install -y systemd-container debootstrap)` };
  }
  const built = spawnSync('bash', [ROOTFS_SCRIPT], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const rootfs = built.stdout?.trim() ?? '';
  if (built.status !== 0 || rootfs === '')
    return {
      ok: false,
      reason:
        `no Debian root for the container (${ROOTFS_SCRIPT}): ` +
        (built.stderr ?? '').trim().split('\n').slice(-3).join(' / '),
    };
  // Read-only: the cache is never written; the run's own copy is what boots.
  const probe = spawnSync(
    'systemd-nspawn',
    ['-q', '--register=no', '--keep-unit', '--read-only', '-D', rootfs, '/bin/true'],
    { env: NSPAWN_ENV, encoding: 'utf8', timeout: 60_000 },
  );
  if (probe.status !== 0)
    return {
      ok: false,
      reason:
        'systemd-nspawn cannot run a container here: ' +
        ((probe.stderr ?? '').trim().split('\n').slice(-3).join(' / ') || `exit ${String(probe.status)}`),
    };
  return { ok: true, rootfs };
};

/**
 * One run's container: a private copy of the cached root under /var/tmp (on the cache's file
 * system, so the copy is quick), booted with `systemd-nspawn -b` in its own process group. It
 * shares the host's network, so the local cloud on 127.0.0.1 is its AWS. `destroy` kills it and
 * removes the copy, whatever state the test left it in.
 */
export class NodeContainer {
  /** The container's root directory, as the host sees it. */
  readonly root: string;
  /** Where the pid of the running nspawn is kept, for the local cloud's SSM fake. */
  readonly pidFile: string;
  private nspawn: ChildProcess | null = null;
  private boots = 0;

  private constructor(readonly dir: string) {
    this.root = join(dir, 'root');
    this.pidFile = join(dir, 'nspawn.pid');
  }

  /** A fresh directory with a copy of `rootfs`; nothing runs yet. */
  static create(rootfs: string): NodeContainer {
    const c = new NodeContainer(mkdtempSync('/var/tmp/queen-fleet-node-'));
    const copy = spawnSync('cp', ['-a', '--reflink=auto', rootfs, c.root], { encoding: 'utf8', timeout: 120_000 });
    if (copy.status !== 0) throw new Error(`copying ${rootfs}: ${copy.stderr}`);
    return c;
  }

  /** `path` inside the container, as a host path. */
  at(path: string): string {
    return join(this.root, path);
  }

  /** The container's init (host pid) now; throws while it is not running. */
  init(): number {
    const init = this.nspawn?.pid === undefined ? null : containerInit(this.nspawn.pid);
    if (init === null) throw new Error('the node container is not running');
    return init;
  }

  /** The host pid of a process of the container, by its pid inside. */
  hostPid(nsPid: number): number | null {
    return hostPid(this.init(), nsPid);
  }

  /**
   * Boots the machine (again, after a poweroff) and waits until systemd says the boot finished.
   * Throws, naming the state and the console log, when it does not within `timeoutMs`.
   */
  async boot(timeoutMs = 60_000): Promise<void> {
    if (this.nspawn !== null && this.nspawn.exitCode === null && this.nspawn.signalCode === null)
      throw new Error('the node container is running already');
    const consoleLog = join(this.dir, `console-${++this.boots}.log`);
    const out = openSync(consoleLog, 'w');
    // The host's Node.js as the node's /usr/bin/node (the units' ExecStart), read-only.
    const args = [
      '-q',
      '-D',
      this.root,
      '--register=no',
      '--keep-unit',
      '-b',
      '--console=read-only',
      `--bind-ro=${process.execPath}:/usr/bin/node`,
    ];
    this.nspawn = track('systemd-nspawn', args, { detached: true, stdio: ['ignore', out, out], env: NSPAWN_ENV });
    closeSync(out);
    writeFileSync(this.pidFile, String(this.nspawn.pid));
    const deadline = Date.now() + timeoutMs;
    let state = 'no init yet';
    while (Date.now() < deadline) {
      if (this.nspawn.exitCode !== null)
        throw new Error(`systemd-nspawn exited with ${this.nspawn.exitCode} while booting; see ${consoleLog}`);
      const init = containerInit(this.nspawn.pid ?? 0);
      if (init !== null) {
        // --wait returns once the boot finished; before PID 1 listens it fails at once.
        const r = await runInContainer(
          init,
          ['systemctl', 'is-system-running', '--wait'],
          Math.max(1000, deadline - Date.now()),
        );
        state = (r.stdout.trim() || r.stderr.trim()).split('\n')[0] ?? '';
        if (state === 'running' || state === 'degraded') return;
      }
      await sleep(200);
    }
    throw new Error(
      `the node container did not finish booting within ${timeoutMs / 1000} s ` +
        `(last state: ${state}); see ${consoleLog}`,
    );
  }

  /** Runs `argv` inside the container (no shell), killed after `timeoutMs`. */
  run(argv: readonly string[], timeoutMs = 30_000): Promise<ContainerRun> {
    return runInContainer(this.init(), argv, timeoutMs);
  }

  /** Like `run`, but throws with the output unless the command exits 0; returns its stdout. */
  async ok(argv: readonly string[], timeoutMs = 30_000): Promise<string> {
    const r = await this.run(argv, timeoutMs);
    if (r.code !== 0) throw new Error(`${argv.join(' ')} exited with ${String(r.code)}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /**
   * Reboots (or powers off) the machine from inside with systemctl and waits for nspawn to exit;
   * returns its exit code. nspawn does not boot a rebooted container itself: it exits with 133
   * ("rebooted") for its caller to start it again, as systemd-nspawn@.service does
   * (RestartForceExitStatus=133); `boot` is that start.
   */
  async shutdown(verb: 'reboot' | 'poweroff', timeoutMs = 90_000): Promise<number | null> {
    const nspawn = this.nspawn;
    if (nspawn === null) return null;
    // --no-block: the answer would race the shutdown that ends this very connection.
    await this.ok(['systemctl', verb, '--no-block']);
    const timer = setTimeout(() => killGroup(nspawn.pid, 'SIGKILL'), timeoutMs);
    await exited(nspawn);
    clearTimeout(timer);
    return nspawn.signalCode === null ? nspawn.exitCode : null;
  }

  /**
   * Kills the machine (its init first: that ends every process of its pid namespace) and nspawn's
   * process group, then removes the copy. Every mount nspawn made lives in its own mount
   * namespace, so nothing of the host is below the copy; the check makes sure before deleting.
   */
  async destroy(): Promise<void> {
    const nspawn = this.nspawn;
    if (nspawn !== null && nspawn.exitCode === null && nspawn.signalCode === null) {
      const init = containerInit(nspawn.pid ?? 0);
      if (init !== null) process.kill(init, 'SIGKILL');
      killGroup(nspawn.pid, 'SIGKILL');
      await exited(nspawn);
    }
    const mounted = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((line) => (line.split(' ')[4] ?? '').startsWith(this.dir));
    if (mounted) throw new Error(`${this.dir} still has mounts of the host below it: not removed`);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
