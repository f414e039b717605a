import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engines, version } from '../../package.json';
import { ROOT, runFleet } from '../helpers/children';

describe('fleet --version', () => {
  it('prints the release package.json names, and nothing else', async () => {
    const res = await runFleet(['--version'], 20_000);
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({
      code: 0,
      stdout: `${version}\n`,
      stderr: '',
    });
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  });
});

describe('the Node floor', () => {
  /** Runs `fleet --version` with process.versions.node made to read `node`. */
  const asNode = (node: string): ReturnType<typeof spawnSync> => {
    const fake = join(mkdtempSync(join(tmpdir(), 'qf-node-')), 'fake-version.js');
    writeFileSync(
      fake,
      `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${node}' } });`,
    );
    return spawnSync(process.execPath, ['--require', fake, join(ROOT, 'bin/fleet.js'), '--version'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
  };

  // The floor package.json states, which the CLI must check: just below it is refused, it runs.
  const [major, minor] = (/^>=(\d+)\.(\d+)$/.exec(engines.node) ?? []).slice(1).map(Number);

  it.each([
    ['20.19.0', 'a Node before the floor'],
    [`${major}.${minor - 1}.0`, 'the minor just below it'],
  ])('refuses Node %s (%s), naming the floor', (node) => {
    const run = asNode(node);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`is too old: v${major}.${minor} or newer is required`);
    expect(run.stdout).toBe('');
  });

  it('runs on the floor itself', () => {
    const run = asNode(`${major}.${minor}.0`);
    expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 0, stdout: `${version}\n` });
  });
});
