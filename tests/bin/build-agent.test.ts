import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildAgent } from '../../bin/build-agent';
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
});
