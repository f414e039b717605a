import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandStage, type StageContext } from '../../agent/worker/stages';
import { readProc } from '../../agent/proc';

const dir = mkdtempSync(join(tmpdir(), 'qf-stages-'));

/** Runs `script` (sh -c) as a stage; returns its progress calls and how it ended. */
const runStage = (script: string, opts: { abortAfterMs?: number; workMs?: number } = {}): Promise<{ progress: (number | undefined)[]; at: number[]; ended: 'resolved' | 'rejected' }> => {
  const progress: (number | undefined)[] = [];
  /** When each progress call came, in ms after the stage started. */
  const at: number[] = [];
  const started = performance.now();
  const abort = new AbortController();
  const ctx: StageContext = {
    taskId: 't1',
    stage: 'transcode',
    workMs: opts.workMs ?? 100,
    outputFile: join(dir, 'out'),
    signal: abort.signal,
    onProgress: (cpu) => {
      progress.push(cpu);
      at.push(performance.now() - started);
    },
    pollMs: 50,
    killGraceMs: 200,
  };
  if (opts.abortAfterMs !== undefined) setTimeout(() => abort.abort(), opts.abortAfterMs);
  return commandStage(['/bin/sh', '-c', script])(ctx).then(
    () => ({ progress, at, ended: 'resolved' as const }),
    () => ({ progress, at, ended: 'rejected' as const }),
  );
};

describe('commandStage', () => {
  it('counts nothing as progress while the command only waits (blocked on a read, a dead socket)', async () => {
    const { at, ended } = await runStage('sleep 0.8');
    expect(ended).toBe('resolved');
    // Starting the shell and exec'ing sleep is CPU time the kernel may charge a whole tick for
    // (a CI run under load saw 10 ms at the first poll); once it waits, the ten or more polls of
    // its last half second find no work.
    expect(at.filter((ms) => ms > 300)).toEqual([]);
  });

  it('counts each line the command reports on stdout as progress', async () => {
    const { progress } = await runStage('for i in 1 2 3; do echo step; sleep 0.1; done');
    expect(progress.filter((p) => p === undefined).length).toBeGreaterThanOrEqual(3);
  });

  it('counts CPU time the command uses as progress', async () => {
    const { progress } = await runStage('i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done');
    expect(progress.some((p) => p !== undefined && p > 0)).toBe(true);
  });

  it('passes the task, stage, output file and work share in the environment', async () => {
    await runStage('echo "$TASK_ID $STAGE $STAGE_WORK_MS" > "$OUTPUT_FILE"', { workMs: 1234 });
    expect(readFileSync(join(dir, 'out'), 'utf8').trim()).toBe('t1 transcode 1234');
  });

  it('stops the whole process group on abort, a stopped grandchild included', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    // The grandchild stops itself: only SIGKILL (after the grace) can end it.
    const { ended } = await runStage(`sh -c 'echo $$ > ${pidFile}; kill -STOP $$; sleep 30' & sleep 30`, { abortAfterMs: 300 });
    expect(ended).toBe('resolved');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 400));
    const left = await readProc(grandchild);
    expect(left === null || left.state === 'Z').toBe(true);
  });
});
