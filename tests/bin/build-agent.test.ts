import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildAgent, packRelease } from '../../bin/build-agent';
import { useInstallRoot } from '../helpers/install';

describe('bin/build-agent.ts › buildAgent', () => {
  const sandbox = useInstallRoot();
  const { install, at } = sandbox;

  it('writes a self-contained directory that runs without node_modules and installs itself', async () => {
    const out = join(sandbox.tmp, 'dist');
    mkdirSync(out);
    writeFileSync(join(out, 'notes.txt'), 'kept');
    writeFileSync(join(out, 'queen-fleet-old.service'), 'stale');

    const written = await buildAgent(out);

    const expected = [
      'agent.js',
      'agent.js.map',
      'install.sh',
      'queen-fleet-peer-sync.service',
      'queen-fleet-worker.service',
      'ssm-register.sh',
      'worker.js',
      'worker.js.map',
    ];
    expect(written).toEqual(expected);
    // A unit of an older build is gone; a file that is not ours stays.
    expect(readdirSync(out).sort()).toEqual([...expected, 'notes.txt'].sort());
    expect(statSync(join(out, 'install.sh')).mode & 0o111).toBe(0o111);
    // Minified with class names kept: errors are named after their class in logs and alerts.
    expect(readFileSync(join(out, 'agent.js'), 'utf8')).toContain('"ConflictError"');

    // Far from any node_modules, the worker loads and fails fast on a missing config (exit 2).
    const run = spawnSync(process.execPath, [join(out, 'worker.js')], {
      cwd: sandbox.tmp,
      encoding: 'utf8',
      timeout: 15_000,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', FLEET_CONFIG_FILE: join(sandbox.tmp, 'missing.json') },
    });
    expect(run.stderr).toMatch(/bad configuration/);
    expect(run.status).toBe(2);

    const installed = install(
      ['--config', sandbox.config, '--node', 'node-2', '--root', sandbox.root],
      join(out, 'install.sh'),
    );
    expect(installed.status).toBe(0);
    expect(readFileSync(at('opt/queen-fleet/agent.js'))).toEqual(readFileSync(join(out, 'agent.js')));
    expect(existsSync(at('opt/queen-fleet/agent.js.map'))).toBe(true);
  }, 60_000);

  it('packs the release as a tarball with its sha256 checksum, and install.sh installs from it', () => {
    const out = join(sandbox.tmp, 'dist', 'agent');
    mkdirSync(out, { recursive: true });
    // Stand-ins for the bundles (buildAgent's are tested above); the installers are the real ones.
    for (const name of ['agent.js', 'worker.js']) writeFileSync(join(out, name), `console.log("${name}");\n`);
    for (const name of ['install.sh', 'ssm-register.sh', 'queen-fleet-peer-sync.service', 'queen-fleet-worker.service'])
      writeFileSync(join(out, name), readFileSync(join(__dirname, '../../agent/install', name)));
    writeFileSync(join(out, 'notes.txt'), 'not ours');

    const release = packRelease(out, join(sandbox.tmp, 'dist'), '9.9.9');

    expect(release.tarball).toBe(join(sandbox.tmp, 'dist', 'queens-fleet-agent-9.9.9.tar.gz'));
    const bytes = readFileSync(release.tarball);
    expect(readFileSync(release.checksum, 'utf8')).toBe(
      `${createHash('sha256').update(bytes).digest('hex')}  queens-fleet-agent-9.9.9.tar.gz\n`,
    );
    // sha256sum itself agrees, from the folder the files are copied to.
    const check = spawnSync('sha256sum', ['--check', release.checksum], { cwd: join(sandbox.tmp, 'dist') });
    expect(check.status).toBe(0);
    const listed = spawnSync('tar', ['-tzf', release.tarball], { encoding: 'utf8' }).stdout.split('\n').sort();
    expect(listed.filter((l) => l !== '' && !l.endsWith('/'))).toEqual(
      [
        'agent.js',
        'install.sh',
        'queen-fleet-peer-sync.service',
        'queen-fleet-worker.service',
        'ssm-register.sh',
        'worker.js',
      ].map((f) => `queens-fleet-agent-9.9.9/${f}`),
    );
    // The same files make the same bytes: a checksum can be compared across builds.
    expect(readFileSync(packRelease(out, join(sandbox.tmp, 'dist'), '9.9.9').tarball)).toEqual(bytes);

    const args = ['--config', sandbox.config, '--node', 'node-2', '--root', sandbox.root];
    // Renamed on the way (a download, say): its checksum file follows the name, its folder need not.
    const renamed = join(sandbox.tmp, 'dist', 'agent-release.tar.gz');
    copyFileSync(release.tarball, renamed);
    copyFileSync(release.checksum, `${renamed}.sha256`);
    const installed = install(['--bundle', renamed, ...args], release.installer);
    expect(installed.stderr).toBe('');
    expect(installed.status).toBe(0);
    expect(installed.stdout).toContain('sha256 matches');
    expect(readFileSync(at('opt/queen-fleet/agent.js'), 'utf8')).toBe('console.log("agent.js");\n');

    // A tarball that does not match its checksum is refused before anything is written.
    writeFileSync(release.tarball, Buffer.concat([bytes, Buffer.from([0])]));
    const fresh = join(sandbox.tmp, 'fresh-root');
    mkdirSync(fresh);
    const tampered = install(['--bundle', release.tarball, ...args.slice(0, 4), '--root', fresh]);
    expect(tampered.status).toBe(2);
    expect(tampered.stderr).toMatch(/does not match .*\.sha256; copy both again/);
    expect(readdirSync(fresh)).toEqual([]);
  }, 60_000);
});
