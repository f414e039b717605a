import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { killAll, ROOT, track } from '../../../helpers/children';

afterAll(() => killAll());

describe('loading fauxqs', () => {
  // Its own process: the test transform cannot load fauxqs, and Node warns once per process.
  it('prints no warning about the SQLite module fauxqs imports and the local cloud never uses', async () => {
    const child = track(process.execPath, ['--import', 'tsx', join(ROOT, 'lib/harness/localcloud/serve.ts')], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit');
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    child.stdin?.end();
    await exited;

    expect(JSON.parse(line)).toHaveProperty('endpoint');
    expect(stderr).not.toMatch(/Warning|SQLite/);
  });
});
