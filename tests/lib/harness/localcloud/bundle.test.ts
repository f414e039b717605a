import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundles, bundleKey } from '../../../../lib/harness/localcloud/bundle';

const dir = mkdtempSync(join(tmpdir(), 'qf-bundle-test-'));

describe('node bundles, kept between drills', () => {
  it('keys a build by the content of every file it read: a change or a missing file is a miss', () => {
    const file = join(dir, 'input.ts');
    writeFileSync(file, 'export const a = 1;');
    const before = bundleKey([file]);
    expect(bundleKey([file])).toBe(before);
    writeFileSync(file, 'export const a = 2;');
    expect(bundleKey([file])).not.toBe(before);
    expect(bundleKey([join(dir, 'gone.ts')])).toBeNull();
  });

  it("places the same bundles in each run's own directory, linked from the kept build", async () => {
    const first = await buildBundles(join(dir, 'run-1'));
    const second = await buildBundles(join(dir, 'run-2'));
    expect(second.agent).toBe(join(dir, 'run-2', 'agent.js'));
    for (const name of ['agent', 'worker', 'nodeHost'] as const) {
      expect(readFileSync(second[name], 'utf8')).toBe(readFileSync(first[name], 'utf8'));
      // One build, two links to it: the second run built nothing.
      expect(statSync(second[name]).ino).toBe(statSync(first[name]).ino);
    }
    expect(readFileSync(first.agent, 'utf8')).toContain('queen-fleet');
  }, 60_000);
});
