import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_COMMANDS } from '../../../../lib/aws/run-command';
import { containerArgv, containerInit, hostPid } from '../../../../lib/harness/localcloud/container';

describe('lib/harness/localcloud/container', () => {
  describe('containerArgv', () => {
    it.each(Object.entries(NODE_COMMANDS))('runs %s as the argv of its fixed string, no shell', (_name, command) => {
      expect(containerArgv(command)).toEqual(command.split(' '));
    });

    it.each([
      'systemctl restart queen-fleet-worker; reboot',
      'systemctl restart queen-fleet-worker ',
      'reboot',
      'systemctl kill queen-fleet-worker',
    ])('refuses %j: only the allow-listed strings run', (command) => {
      expect(containerArgv(command)).toBeUndefined();
    });
  });

  describe('containerInit and hostPid (a fake /proc)', () => {
    let proc: string;
    /** A process in the fake /proc: its parent, its pids by namespace (outermost first), its pid namespace. */
    const add = (pid: number, ppid: number, nsPids: number[], ns: string, comm = 'node'): void => {
      mkdirSync(join(proc, String(pid), 'ns'), { recursive: true });
      writeFileSync(join(proc, String(pid), 'stat'), `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1\n`);
      writeFileSync(join(proc, String(pid), 'status'), `Name:\t${comm}\nNSpid:\t${nsPids.join('\t')}\n`);
      symlinkSync(ns, join(proc, String(pid), 'ns', 'pid'));
    };

    beforeEach(() => {
      proc = mkdtempSync(join(tmpdir(), 'qf-proc-'));
      add(100, 1, [100], 'pid:[1]', 'systemd-nspawn');
      // nspawn's own helper: a child in the host's namespace, not the container's init.
      add(101, 100, [101], 'pid:[1]', 'sd-(x) helper');
      add(102, 100, [102, 1], 'pid:[2]', 'systemd');
      add(150, 102, [150, 41], 'pid:[2]', 'node');
      // Pid 41 of another namespace: not the container's.
      add(160, 1, [160, 41], 'pid:[3]', 'node');
    });
    afterEach(() => rmSync(proc, { recursive: true, force: true }));

    it("finds the nspawn child that is pid 1 of its namespace, even with ') ' in a command name", () => {
      expect(containerInit(100, proc)).toBe(102);
    });

    it('finds no init for a process without one', () => {
      expect(containerInit(150, proc)).toBeNull();
      expect(containerInit(999, proc)).toBeNull();
    });

    it("maps a pid inside the container to the host's, only within the container's namespace", () => {
      expect(hostPid(102, 41, proc)).toBe(150);
      expect(hostPid(102, 42, proc)).toBeNull();
    });
  });
});
