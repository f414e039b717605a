import { version } from '../../package.json';
import { runFleet } from '../helpers/children';

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
