import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { retryUntilHit } from '../../../../lib/harness/drill/faults';
import { isLive } from '../../../../lib/harness/localcloud/processes';

/**
 * The hang-stage fault must strike a stage (CI run 20: it struck between two stages, stopped
 * nothing, and the drill's hung-task check had nothing to see). A stage that already exited is
 * not live, and a fault that found none waits for the next stage to start.
 */
describe('hang-stage: what it stops', () => {
  const procRoot = mkdtempSync(join(tmpdir(), 'qf-proc-'));
  const stat = (pid: number, text: string): void => {
    mkdirSync(join(procRoot, String(pid)), { recursive: true });
    writeFileSync(join(procRoot, String(pid), 'stat'), text);
  };

  it('counts running and sleeping processes as live, not zombies or ones gone, whatever their name holds', () => {
    stat(1, '1 (sh) S 0 1 1 0');
    stat(2, '2 (stage) R) R 1 2 2 0');
    stat(3, '3 (sh) Z 1 3 3 0');
    stat(4, '4 (a ) Z b) T 1 4 4 0');
    expect([1, 2, 3, 4, 5].map((pid) => isLive(pid, procRoot))).toEqual([true, true, false, true, false]);
  });

  it('a real process is live; once it exited, it is not', async () => {
    const child = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore' });
    const pid = child.pid ?? -1;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(isLive(pid)).toBe(false);
    expect(isLive(process.pid)).toBe(true);
  });

  it('looks again until a strike hits, and reports what it hit', async () => {
    let calls = 0;
    const hit = await new Promise<number>((resolve) => retryUntilHit(() => (++calls >= 4 ? 2 : 0), 5, 5_000, resolve));
    expect(hit).toBe(2);
    expect(calls).toBe(4);
  });

  it('gives up after its time, reporting nothing hit; a cancel stops it quietly', async () => {
    const hit = await new Promise<number>((resolve) => retryUntilHit(() => 0, 5, 30, resolve));
    expect(hit).toBe(0);
    let told = false;
    let calls = 0;
    const cancel = retryUntilHit(
      () => (calls++, 0),
      5,
      5_000,
      () => (told = true),
    );
    cancel();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls).toBe(0);
    expect(told).toBe(false);
  });
});
