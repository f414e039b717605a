import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { buildConfig } from '../../lib/core/config';
import { DAEMON_NODE_FLAGS } from '../../lib/harness/localcloud/bundle';
import { INSTALL_DIR, parseUnit, SAMPLE_CONFIG, snapshot, UNITS, useInstallRoot } from '../helpers/install';

describe('agent/install/install.sh', () => {
  const sandbox = useInstallRoot();
  const { install, standard, at, mode } = sandbox;

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
    const envLines = readFileSync(at('etc/queen-fleet/fleet.env'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(envLines).toEqual(['FLEET_CONFIG_FILE=/etc/queen-fleet/config.json', 'FLEET_NODE_NAME=node-1']);
    // The daemons reject unknown FLEET_* variables: what the env file sets must load.
    const fromEnvFile = Object.fromEntries(
      envLines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(buildConfig(fromEnvFile, SAMPLE_CONFIG).nodeName).toBe('node-1');
    expect(mode('var/queen-fleet')).toBe('0750');
    for (const unit of UNITS) {
      expect(readFileSync(at(`etc/systemd/system/${unit}`), 'utf8')).toBe(
        readFileSync(join(INSTALL_DIR, unit), 'utf8'),
      );
      expect(mode(`etc/systemd/system/${unit}`)).toBe('0644');
    }
    // Root's existing credentials are left alone.
    expect(readFileSync(at('root/.aws/credentials'), 'utf8')).toBe('[default]\n');
    expect(mode('root/.aws')).toBe('0700');
  });

  it('enables both units for multi-user.target by symlink and never calls systemctl below a temp root', () => {
    const run = install([...standard(), '--no-start']);

    expect(run.status).toBe(0);
    for (const unit of UNITS)
      expect(readlinkSync(at(`etc/systemd/system/multi-user.target.wants/${unit}`))).toBe(
        `/etc/systemd/system/${unit}`,
      );
    expect(existsSync(at('root/.aws'))).toBe(true);
    expect(existsSync(sandbox.calls)).toBe(false);
  });

  it('gives the same result when run twice, and says it wrote nothing the second time', () => {
    expect(install(standard()).status).toBe(0);
    const first = snapshot(sandbox.root);

    const again = install(standard());

    expect(again.status).toBe(0);
    expect(again.stdout).not.toMatch(/wrote/);
    expect(snapshot(sandbox.root)).toEqual(first);
  });

  it('replaces only what changed on a rerun', () => {
    expect(install(standard()).status).toBe(0);
    writeFileSync(sandbox.config, JSON.stringify({ ...SAMPLE_CONFIG, concurrency: 4 }));

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
    [
      'an option without its value',
      ['--config', 'CONFIG', '--node', 'node-1', '--root'],
      /option --root needs a value/,
    ],
    [
      'a config that does not exist',
      ['--config', '/nonexistent/config.json', '--node', 'node-1'],
      /--config '\/nonexistent\/config.json': no such readable file/,
    ],
    [
      'a root that does not exist',
      ['--config', 'CONFIG', '--node', 'node-1', '--root', '/nonexistent/root'],
      /--root '\/nonexistent\/root': no such directory/,
    ],
    [
      'a relative --node-bin',
      ['--config', 'CONFIG', '--node', 'node-1', '--node-bin', 'node'],
      /--node-bin 'node': must be an absolute path/,
    ],
    [
      'an activation without its region',
      ['--config', 'CONFIG', '--node', 'node-1', '--activation-id', 'a', '--activation-code', 'c'],
      /--activation-id, --activation-code and --region go together/,
    ],
  ])('exits 2 with a message for %s', (_name, args, message) => {
    // A temp root first: even a parser that acted early could not write to this machine.
    const run = install(['--root', sandbox.root, ...args.map((a) => (a === 'CONFIG' ? sandbox.config : a))]);

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(readdirSync(sandbox.root)).toEqual([]);
  });

  it.each([
    ['not JSON', '{"nodes": [', /not valid JSON/],
    [
      'without this node among its nodes',
      JSON.stringify({ nodes: [{ name: 'node-2', instanceId: 'mi-0123456789abcdef1' }] }),
      /node node-1 is not one of its nodes \(node-2\)/,
    ],
    [
      'with a data directory the units may not write',
      JSON.stringify({ dataDir: '/srv/fleet' }),
      /dataDir \/srv\/fleet: the units may only write \/var\/queen-fleet/,
    ],
    ['with a privileged health port', JSON.stringify({ healthPort: 80 }), /healthPort 80 needs a capability/],
  ])('exits 2 for a config %s, before writing anything', (_name, text, message) => {
    writeFileSync(sandbox.config, text);

    const run = install(standard());

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(readdirSync(sandbox.root)).toEqual([]);
  });

  it('exits 2 with a build hint when the bundle directory has no agent.js', () => {
    rmSync(join(sandbox.bundle, 'agent.js'));

    const run = install(standard());

    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/agent\.js is missing: build the release with 'npm run build:agent'/);
  });

  it.each([
    ['v20.19.0', 1, /Node\.js v20\.19\.0 at .* is too old: v22\.12 or newer is required/],
    ['v22.11.0', 1, /too old/],
    ['v22.12.0', 0, /^$/],
    ['v24.1.0', 0, /^$/],
  ])('checks the --node-bin version: %s exits %i', (version, status, message) => {
    const fake = join(sandbox.tmp, 'bin', 'node');
    writeFileSync(
      fake,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo ${version}; else exec '${process.execPath}' "$@"; fi\n`,
    );
    chmodSync(fake, 0o755);

    const run = install([...standard(), '--node-bin', fake]);

    expect(run.status).toBe(status);
    expect(run.stderr).toMatch(message);
    if (status === 0)
      expect(
        parseUnit(readFileSync(at('etc/systemd/system/queen-fleet-worker.service'), 'utf8')).Service?.ExecStart,
      ).toEqual([`${fake} ${DAEMON_NODE_FLAGS.join(' ')} /opt/queen-fleet/worker.js`]);
  });

  it('takes an activation: needs ssm-register.sh in the bundle, and registers nothing below a temp root', () => {
    const activation = ['--activation-id', 'act-1', '--activation-code', 'code', '--region', 'us-west-2'];
    const missing = install([...standard(), ...activation]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/ssm-register\.sh is missing/);

    writeFileSync(join(sandbox.bundle, 'ssm-register.sh'), readFileSync(join(INSTALL_DIR, 'ssm-register.sh')));
    const run = install([...standard(), ...activation]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`not registering the SSM agent below ${sandbox.root}`);
    expect(existsSync(sandbox.calls)).toBe(false);
  });
});
