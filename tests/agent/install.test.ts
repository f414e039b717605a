import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAgent } from '../../bin/build-agent';
import { buildConfig } from '../../lib/core/config';

const ROOT = join(__dirname, '..', '..');
const INSTALL_DIR = join(ROOT, 'agent', 'install');
const UNITS = ['queen-fleet-peer-sync.service', 'queen-fleet-worker.service'] as const;

/** A fleet config as an operator writes it (fixed ids). */
const SAMPLE_CONFIG = {
  region: 'us-west-2',
  bucket: 'dablio-queens-fleet-state',
  queueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/queen-fleet-tasks',
  topicArn: 'arn:aws:sns:us-west-2:123456789012:queen-fleet-alerts',
  nodes: [
    { name: 'node-1', instanceId: 'mi-0123456789abcdef0' },
    { name: 'node-2', instanceId: 'mi-0123456789abcdef1' },
  ],
};

let tmp: string;
let bundle: string;
let root: string;
let config: string;
let calls: string;
let env: NodeJS.ProcessEnv;

/** A bundle directory with stand-in bundles and the real units. */
const makeBundle = (dir: string): void => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'agent.js'), 'console.log("agent");\n');
  writeFileSync(join(dir, 'worker.js'), 'console.log("worker");\n');
  writeFileSync(join(dir, 'worker.js.map'), '{"version":3}\n');
  for (const unit of UNITS) copyFileSync(join(INSTALL_DIR, unit), join(dir, unit));
};

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'qf-install-'));
  bundle = join(tmp, 'bundle');
  root = join(tmp, 'root');
  config = join(tmp, 'config.json');
  calls = join(tmp, 'systemctl-calls');
  makeBundle(bundle);
  mkdirSync(root);
  writeFileSync(config, JSON.stringify(SAMPLE_CONFIG, null, 2));
  // A systemctl that only records: the installer must never reach it below a temp root.
  mkdirSync(join(tmp, 'bin'));
  writeFileSync(join(tmp, 'bin', 'systemctl'), `#!/bin/sh\necho "$@" >> '${calls}'\n`);
  chmodSync(join(tmp, 'bin', 'systemctl'), 0o755);
  env = { ...process.env, PATH: `${join(tmp, 'bin')}:${process.env.PATH ?? ''}` };
});

afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const install = (args: string[], script = join(INSTALL_DIR, 'install.sh')): SpawnSyncReturns<string> =>
  spawnSync('bash', [script, ...args], { env, encoding: 'utf8', timeout: 15_000 });
const standard = (): string[] => ['--bundle', bundle, '--config', config, '--node', 'node-1', '--root', root];
const at = (path: string): string => join(root, path);
const mode = (path: string): string => (statSync(at(path)).mode & 0o7777).toString(8).padStart(4, '0');

/** Every path below the root with its type, mode and content: what "the same result" means. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = join(rel, name);
      const st = lstatSync(join(dir, path));
      const perm = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(join(dir, path))}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${perm}`;
        walk(path);
      } else out[path] = `file ${perm} ${readFileSync(join(dir, path), 'utf8')}`;
    }
  };
  walk('');
  return out;
};

/** A unit file as section → key → values (keys such as SystemCallFilter repeat). */
const parseUnit = (text: string): Record<string, Record<string, string[]>> => {
  const unit: Record<string, Record<string, string[]>> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header?.[1] !== undefined) {
      section = header[1];
      unit[section] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    ((unit[section] ??= {})[key] ??= []).push(line.slice(eq + 1));
  }
  return unit;
};
const readUnit = (name: string): Record<string, Record<string, string[]>> => parseUnit(readFileSync(join(INSTALL_DIR, name), 'utf8'));

describe('agent/install/install.sh', () => {
  it('uses a sample config that the daemons themselves accept', () => {
    expect(() => buildConfig({ FLEET_NODE_NAME: 'node-1' }, SAMPLE_CONFIG)).not.toThrow();
  });

  it('installs bundles, config, env file, data dir and units below --root with their modes', () => {
    mkdirSync(at('root/.aws'), { recursive: true, mode: 0o700 });
    writeFileSync(at('root/.aws/credentials'), '[default]\n', { mode: 0o600 });

    const run = install(standard());

    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(readFileSync(at('opt/queen-fleet/agent.js'), 'utf8')).toBe('console.log("agent");\n');
    expect(readFileSync(at('opt/queen-fleet/worker.js.map'), 'utf8')).toBe('{"version":3}\n');
    expect(mode('opt/queen-fleet/worker.js')).toBe('0644');
    expect(JSON.parse(readFileSync(at('etc/queen-fleet/config.json'), 'utf8'))).toEqual(SAMPLE_CONFIG);
    expect(mode('etc/queen-fleet/config.json')).toBe('0640');
    expect(mode('etc/queen-fleet/fleet.env')).toBe('0640');
    const envLines = readFileSync(at('etc/queen-fleet/fleet.env'), 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(envLines).toEqual(['FLEET_CONFIG_FILE=/etc/queen-fleet/config.json', 'FLEET_NODE_NAME=node-1', 'NODE_OPTIONS=--enable-source-maps']);
    // The daemons reject unknown FLEET_* variables: what the env file sets must load.
    const fromEnvFile = Object.fromEntries(envLines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(buildConfig(fromEnvFile, SAMPLE_CONFIG).nodeName).toBe('node-1');
    expect(mode('var/queen-fleet')).toBe('0750');
    for (const unit of UNITS) {
      expect(readFileSync(at(`etc/systemd/system/${unit}`), 'utf8')).toBe(readFileSync(join(INSTALL_DIR, unit), 'utf8'));
      expect(mode(`etc/systemd/system/${unit}`)).toBe('0644');
    }
    // Root's existing credentials are left alone.
    expect(readFileSync(at('root/.aws/credentials'), 'utf8')).toBe('[default]\n');
    expect(mode('root/.aws')).toBe('0700');
  });

  it('enables both units for multi-user.target by symlink and never calls systemctl below a temp root', () => {
    const run = install([...standard(), '--no-start']);

    expect(run.status).toBe(0);
    for (const unit of UNITS) expect(readlinkSync(at(`etc/systemd/system/multi-user.target.wants/${unit}`))).toBe(`/etc/systemd/system/${unit}`);
    expect(existsSync(at('root/.aws'))).toBe(true);
    expect(existsSync(calls)).toBe(false);
  });

  it('gives the same result when run twice, and says it wrote nothing the second time', () => {
    expect(install(standard()).status).toBe(0);
    const first = snapshot(root);

    const again = install(standard());

    expect(again.status).toBe(0);
    expect(again.stdout).not.toMatch(/wrote/);
    expect(snapshot(root)).toEqual(first);
  });

  it('replaces only what changed on a rerun', () => {
    expect(install(standard()).status).toBe(0);
    writeFileSync(config, JSON.stringify({ ...SAMPLE_CONFIG, concurrency: 4 }));

    const run = install(standard());

    expect(run.stdout.match(/^wrote .*$/gm)).toEqual([`wrote ${at('etc/queen-fleet/config.json')}`]);
  });

  it.each([
    ['no arguments', [], /--config FILE is required/],
    ['a missing --node', ['--config', 'CONFIG'], /--node NAME is required/],
    ['an upper-case node name', ['--config', 'CONFIG', '--node', 'Node-1'], /--node 'Node-1': must be/],
    ['a node name starting with a dash', ['--config', 'CONFIG', '--node', '-node'], /must be 1-63 lower-case/],
    ['a node name of 64 characters', ['--config', 'CONFIG', '--node', 'n'.repeat(64)], /must be 1-63 lower-case/],
    ['an unknown option', ['--config', 'CONFIG', '--node', 'node-1', '--force'], /unknown argument: --force/],
    ['an option without its value', ['--config', 'CONFIG', '--node', 'node-1', '--root'], /option --root needs a value/],
    ['a config that does not exist', ['--config', '/nonexistent/config.json', '--node', 'node-1'], /--config '\/nonexistent\/config.json': no such readable file/],
    ['a root that does not exist', ['--config', 'CONFIG', '--node', 'node-1', '--root', '/nonexistent/root'], /--root '\/nonexistent\/root': no such directory/],
    ['a relative --node-bin', ['--config', 'CONFIG', '--node', 'node-1', '--node-bin', 'node'], /--node-bin 'node': must be an absolute path/],
  ])('exits 2 with a message for %s', (_name, args, message) => {
    // A temp root first: even a parser that acted early could not write to this machine.
    const run = install(['--root', root, ...args.map((a) => (a === 'CONFIG' ? config : a))]);

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(readdirSync(root)).toEqual([]);
  });

  it.each([
    ['not JSON', '{"nodes": [', /not valid JSON/],
    ['without this node among its nodes', JSON.stringify({ nodes: [{ name: 'node-2', instanceId: 'mi-0123456789abcdef1' }] }), /node node-1 is not one of its nodes \(node-2\)/],
    ['with a data directory the units may not write', JSON.stringify({ dataDir: '/srv/fleet' }), /dataDir \/srv\/fleet: the units may only write \/var\/queen-fleet/],
    ['with a privileged health port', JSON.stringify({ healthPort: 80 }), /healthPort 80 needs a capability/],
  ])('exits 2 for a config %s, before writing anything', (_name, text, message) => {
    writeFileSync(config, text);

    const run = install(standard());

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(readdirSync(root)).toEqual([]);
  });

  it('exits 2 with a build hint when the bundle directory has no agent.js', () => {
    rmSync(join(bundle, 'agent.js'));

    const run = install(standard());

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/agent\.js is missing: build the bundle with 'npx tsx bin\/build-agent\.ts'/);
  });

  it.each([
    ['v18.19.1', 1, /Node\.js v18\.19\.1 at .* is too old: v20\.19 or newer is required/],
    ['v20.2.0', 1, /too old/],
    ['v20.19.0', 0, /^$/],
    ['v22.1.0', 0, /^$/],
  ])('checks the --node-bin version: %s exits %i', (version, status, message) => {
    const fake = join(tmp, 'bin', 'node');
    writeFileSync(fake, `#!/bin/sh\nif [ "$1" = --version ]; then echo ${version}; else exec '${process.execPath}' "$@"; fi\n`);
    chmodSync(fake, 0o755);

    const run = install([...standard(), '--node-bin', fake]);

    expect(run.status).toBe(status);
    expect(run.stderr).toMatch(message);
    if (status === 0) expect(parseUnit(readFileSync(at('etc/systemd/system/queen-fleet-worker.service'), 'utf8')).Service?.ExecStart).toEqual([`${fake} /opt/queen-fleet/worker.js`]);
  });
});

describe('agent/install units', () => {
  const agent = readUnit('queen-fleet-peer-sync.service');
  const worker = readUnit('queen-fleet-worker.service');

  it.each([
    ['queen-fleet-peer-sync.service', '/opt/queen-fleet/agent.js'],
    ['queen-fleet-worker.service', '/opt/queen-fleet/worker.js'],
  ])('%s runs its bundle with /usr/bin/node, the env file and the SSM agent credentials file', (name, bundlePath) => {
    const service = readUnit(name).Service ?? {};
    expect(service.ExecStart).toEqual([`/usr/bin/node ${bundlePath}`]);
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
  ])('bounds the %s crash loop with start limits in [Unit] and stops it with SIGTERM after the 30 s drain', (_name, unit) => {
    expect(unit.Service?.Restart).toEqual(['always']);
    expect(Number(unit.Unit?.StartLimitIntervalSec?.[0])).toBeGreaterThan(0);
    expect(Number(unit.Unit?.StartLimitBurst?.[0])).toBeGreaterThan(1);
    expect(unit.Service?.StartLimitBurst).toBeUndefined();
    expect(unit.Service?.KillSignal).toEqual(['SIGTERM']);
    expect(Number(unit.Service?.TimeoutStopSec?.[0])).toBeGreaterThan(30);
  });

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
      for (const key of ['MemoryDenyWriteExecute', 'ProcSubset', 'PrivateUsers']) expect(unit.Service?.[key]).toBeUndefined();
    });

    it('uses only directives that systemd 249 (Ubuntu 22.04) knows', () => {
      const known249 = new Set('Description Wants After StartLimitIntervalSec StartLimitBurst Type EnvironmentFile Environment ExecStart Restart RestartSec KillSignal KillMode TimeoutStopSec User NoNewPrivileges CapabilityBoundingSet AmbientCapabilities ProtectSystem ReadWritePaths ProtectHome BindReadOnlyPaths PrivateTmp PrivateDevices PrivateIPC ProtectProc ProtectKernelTunables ProtectKernelModules ProtectKernelLogs ProtectControlGroups ProtectClock ProtectHostname RestrictAddressFamilies RestrictNamespaces RestrictRealtime RestrictSUIDSGID LockPersonality SystemCallArchitectures SystemCallFilter SystemCallErrorNumber UMask WantedBy'.split(' '));
      const used = Object.values(unit).flatMap((section) => Object.keys(section));
      expect(used.filter((k) => !known249.has(k))).toEqual([]);
    });
  });
});

const hasAnalyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).status === 0;

/** systemd-analyze verify exits 0 on unknown keys and bad values, but prints them: both count. */
const verify = (paths: string[]): { status: number | null; problems: string[] } => {
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], { encoding: 'utf8', timeout: 15_000 });
  return { status: run.status, problems: `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => l.includes('queen-fleet')) };
};

(hasAnalyze ? describe : describe.skip)(`systemd-analyze verify${hasAnalyze ? '' : ' (skipped: systemd-analyze is not on PATH)'}`, () => {
  it('accepts both installed units', () => {
    // ExecStart must name an existing binary: point it at this Node.
    expect(install([...standard(), '--node-bin', process.execPath]).status).toBe(0);

    const result = verify(UNITS.map((u) => at(`etc/systemd/system/${u}`)));

    expect(result.problems).toEqual([]);
    expect(result.status).toBe(0);
  });

  it('flags a unit with an unknown directive or a bad value (the check can fail)', () => {
    const broken = join(tmp, 'queen-fleet-worker.service');
    const text = readFileSync(join(INSTALL_DIR, 'queen-fleet-worker.service'), 'utf8');
    writeFileSync(broken, text.replace('Restart=always', 'Restart=sometimes\nFrobnicate=yes').replace('/usr/bin/node', process.execPath));

    const result = verify([broken]);

    expect(result.problems).toEqual([expect.stringMatching(/Failed to parse service restart specifier/), expect.stringMatching(/Unknown key 'Frobnicate'/)]);
  });
});

describe('bin/build-agent.ts › buildAgent', () => {
  it('writes a self-contained directory that runs without node_modules and installs itself', async () => {
    const out = join(tmp, 'dist');
    mkdirSync(out);
    writeFileSync(join(out, 'notes.txt'), 'kept');
    writeFileSync(join(out, 'queen-fleet-old.service'), 'stale');

    const written = await buildAgent(out);

    const expected = ['agent.js', 'agent.js.map', 'install.sh', 'queen-fleet-peer-sync.service', 'queen-fleet-worker.service', 'worker.js', 'worker.js.map'];
    expect(written).toEqual(expected);
    // A unit of an older build is gone; a file that is not ours stays.
    expect(readdirSync(out).sort()).toEqual([...expected, 'notes.txt'].sort());
    expect(statSync(join(out, 'install.sh')).mode & 0o111).toBe(0o111);
    // Minified with class names kept: errors are named after their class in logs and alerts.
    expect(readFileSync(join(out, 'agent.js'), 'utf8')).toContain('"ConflictError"');

    // Far from any node_modules, the worker loads and fails fast on a missing config (exit 2).
    const run = spawnSync(process.execPath, [join(out, 'worker.js')], { cwd: tmp, encoding: 'utf8', timeout: 15_000, env: { PATH: process.env.PATH, LOG_LEVEL: 'info', FLEET_CONFIG_FILE: join(tmp, 'missing.json') } });
    expect(run.stderr).toMatch(/bad configuration/);
    expect(run.status).toBe(2);

    const installed = install(['--config', config, '--node', 'node-2', '--root', root], join(out, 'install.sh'));
    expect(installed.status).toBe(0);
    expect(readFileSync(at('opt/queen-fleet/agent.js'))).toEqual(readFileSync(join(out, 'agent.js')));
    expect(existsSync(at('opt/queen-fleet/agent.js.map'))).toBe(true);
  }, 60_000);
});
