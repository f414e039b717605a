import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFleet } from '../helpers/children';

/** `fleet demo --pipeline DIR` refuses at once what it cannot run: no drill starts. */
describe('fleet demo --pipeline', () => {
  it('stops at once without ffmpeg, naming the install command', async () => {
    // A PATH with node alone: no ffmpeg, no ffprobe.
    const bin = join(mkdtempSync(join(tmpdir(), 'qf-no-ffmpeg-')), 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    const started = Date.now();
    const res = await runFleet(['demo', '--pipeline', 'examples/ffmpeg'], 20_000, { PATH: bin });
    expect({ code: res.code, stderr: res.stderr.trim() }).toEqual({
      code: 2,
      stderr:
        'fleet: ffmpeg is not installed: install it with `sudo apt-get install ffmpeg` (Debian, Ubuntu) or ' +
        '`brew install ffmpeg`',
    });
    expect(res.stdout).toBe('');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a folder without a pipeline.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qf-no-pipeline-'));
    const res = await runFleet(['demo', '--pipeline', dir], 20_000);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`fleet: pipeline file ${dir}/pipeline.json: cannot be read (ENOENT)`);
  });
});
