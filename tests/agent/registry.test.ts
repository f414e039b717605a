import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyRegistry, loadRegistry, registryPath, writeJsonAtomic } from '../../agent/registry';

describe('loadRegistry', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-registry-'));
  });

  it('reads a valid registry back, tasks included', async () => {
    await writeJsonAtomic(registryPath(dir), {
      version: 1,
      completedTotal: 2,
      recentCompletions: [],
      inFlight: [],
      tasks: { t1: { status: 'done', stages: 4, progress: 48, epoch: 1, done: { node: 'node-1', epoch: 1, at: 5 } } },
    });
    const { registry, damaged } = await loadRegistry(dir, 1);
    expect(damaged).toBeNull();
    expect(registry.tasks?.t1?.status).toBe('done');
  });

  it.each([
    ['truncated JSON', '{"version":1,"completedTotal":2,"tas'],
    ['a wrong schema version', '{"version":7}'],
  ])('copies a registry with %s aside and starts empty, never overwriting it in place', async (_name, text) => {
    writeFileSync(registryPath(dir), text);
    const { registry, damaged } = await loadRegistry(dir, 42);
    expect(damaged).not.toBeNull();
    expect(registry).toEqual(emptyRegistry());
    expect(readdirSync(dir)).toContain('registry.json.quarantine.42');
    expect(readFileSync(join(dir, 'registry.json.quarantine.42'), 'utf8')).toBe(text);
  });
});
