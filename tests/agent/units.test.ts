import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAEMON_NODE_FLAGS } from '../../lib/harness/localcloud/bundle';
import { INSTALL_DIR, readUnit, UNITS, useInstallRoot } from '../helpers/install';

describe('agent/install units', () => {
  const agent = readUnit('queen-fleet-peer-sync.service');
  const worker = readUnit('queen-fleet-worker.service');

  it.each([
    ['queen-fleet-peer-sync.service', '/opt/queen-fleet/agent.js'],
    ['queen-fleet-worker.service', '/opt/queen-fleet/worker.js'],
  ])('%s runs its bundle with /usr/bin/node, the env file and the SSM agent credentials file', (name, bundlePath) => {
    const service = readUnit(name).Service ?? {};
    expect(service.ExecStart).toEqual([`/usr/bin/node ${DAEMON_NODE_FLAGS.join(' ')} ${bundlePath}`]);
    expect(service.EnvironmentFile).toEqual(['/etc/queen-fleet/fleet.env']);
    expect(service.Environment).toContain('AWS_SHARED_CREDENTIALS_FILE=/root/.aws/credentials');
  });

  it('brings a crashed worker back within 5 s', () => {
    expect(worker.Service?.Restart).toEqual(['always']);
    expect(Number(worker.Service?.RestartSec?.[0])).toBeLessThanOrEqual(2);
  });

  it.each([
    ['agent', agent],
    ['worker', worker],
  ])(
    'bounds the %s crash loop with start limits in [Unit] and stops it with SIGTERM after the 30 s drain',
    (_name, unit) => {
      expect(unit.Service?.Restart).toEqual(['always']);
      expect(Number(unit.Unit?.StartLimitIntervalSec?.[0])).toBeGreaterThan(0);
      expect(Number(unit.Unit?.StartLimitBurst?.[0])).toBeGreaterThan(1);
      expect(unit.Service?.StartLimitBurst).toBeUndefined();
      expect(unit.Service?.KillSignal).toEqual(['SIGTERM']);
      expect(Number(unit.Service?.TimeoutStopSec?.[0])).toBeGreaterThan(30);
    },
  );

  it('lets the worker drain its stage commands itself: SIGTERM to the main process only', () => {
    expect(worker.Service?.KillMode).toEqual(['mixed']);
  });

  it('starts the agent after the network and the SSM agent, wanting them without requiring them', () => {
    expect(agent.Unit?.After).toEqual([expect.stringMatching(/network-online\.target.*amazon-ssm-agent\.service/)]);
    expect(agent.Unit?.Wants?.join(' ')).toMatch(/network-online\.target.*amazon-ssm-agent\.service/);
    expect(agent.Unit?.Requires).toBeUndefined();
    expect(worker.Unit?.Requires).toBeUndefined();
    expect(worker.Unit?.BindsTo).toBeUndefined();
  });

  describe.each([
    ['agent', agent],
    ['worker', worker],
  ])('%s sandbox', (_name, unit) => {
    it.each([
      ['User', 'root'],
      ['NoNewPrivileges', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['AmbientCapabilities', ''],
      ['ProtectSystem', 'strict'],
      ['ReadWritePaths', '/var/queen-fleet'],
      ['ReadOnlyPaths', '/run'],
      ['ProtectHome', 'tmpfs'],
      ['BindReadOnlyPaths', '/root/.aws'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['ProtectKernelTunables', 'yes'],
      ['ProtectKernelModules', 'yes'],
      ['ProtectKernelLogs', 'yes'],
      ['ProtectControlGroups', 'yes'],
      ['RestrictAddressFamilies', 'AF_UNIX AF_INET AF_INET6 AF_NETLINK'],
      ['RestrictNamespaces', 'yes'],
      ['RestrictSUIDSGID', 'yes'],
      ['LockPersonality', 'yes'],
      ['SystemCallArchitectures', 'native'],
    ])('sets %s=%s', (key, value) => {
      expect(unit.Service?.[key]).toEqual([value]);
    });

    it('leaves out what would break Node or the boot id: MemoryDenyWriteExecute, ProcSubset, PrivateUsers', () => {
      for (const key of ['MemoryDenyWriteExecute', 'ProcSubset', 'PrivateUsers'])
        expect(unit.Service?.[key]).toBeUndefined();
    });

    it('uses only directives that systemd 249 (Ubuntu 22.04) knows', () => {
      const known249 = new Set(
        (
          'Description Wants After StartLimitIntervalSec StartLimitBurst Type EnvironmentFile Environment ' +
          'ExecStart Restart RestartSec KillSignal KillMode TimeoutStopSec User NoNewPrivileges ' +
          'CapabilityBoundingSet AmbientCapabilities ProtectSystem ReadWritePaths ReadOnlyPaths ProtectHome ' +
          'BindReadOnlyPaths PrivateTmp PrivateDevices PrivateIPC ProtectProc ProtectKernelTunables ' +
          'ProtectKernelModules ProtectKernelLogs ProtectControlGroups ProtectClock ProtectHostname ' +
          'RestrictAddressFamilies RestrictNamespaces RestrictRealtime RestrictSUIDSGID LockPersonality ' +
          'SystemCallArchitectures SystemCallFilter SystemCallErrorNumber UMask WantedBy'
        ).split(' '),
      );
      const used = Object.values(unit).flatMap((section) => Object.keys(section));
      expect(used.filter((k) => !known249.has(k))).toEqual([]);
    });
  });
});

const hasAnalyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;

/** systemd-analyze verify exits 0 on unknown keys and bad values, but prints them: both count. */
const verify = (paths: string[]): { status: number | null; problems: string[] } => {
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], { encoding: 'utf8', timeout: 15_000 });
  return {
    status: run.status,
    problems: `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => l.includes('queen-fleet')),
  };
};

(hasAnalyze ? describe : describe.skip)(
  `systemd-analyze verify${hasAnalyze ? '' : ' (skipped: systemd-analyze is not on PATH)'}`,
  () => {
    const sandbox = useInstallRoot();
    const { install, standard, at } = sandbox;

    it('accepts both installed units', () => {
      // ExecStart must name an existing binary: point it at this Node.
      expect(install([...standard(), '--node-bin', process.execPath]).status).toBe(0);

      const result = verify(UNITS.map((u) => at(`etc/systemd/system/${u}`)));

      expect(result.problems).toEqual([]);
      expect(result.status).toBe(0);
    });

    it('flags a unit with an unknown directive or a bad value (the check can fail)', () => {
      const broken = join(sandbox.tmp, 'queen-fleet-worker.service');
      const text = readFileSync(join(INSTALL_DIR, 'queen-fleet-worker.service'), 'utf8');
      writeFileSync(
        broken,
        text.replace('Restart=always', 'Restart=sometimes\nFrobnicate=yes').replace('/usr/bin/node', process.execPath),
      );

      const result = verify([broken]);

      expect(result.problems).toEqual([
        expect.stringMatching(/Failed to parse service restart specifier/),
        expect.stringMatching(/Unknown key 'Frobnicate'/),
      ]);
    });
  },
);
