import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  commandStage,
  isWork,
  StageFailedError,
  StageTempFailError,
  type StageContext,
} from '../../agent/worker/stages';
import type { PipelineStage, ProgressLine } from '../../lib/core/pipeline';
import { readProc } from '../../agent/proc';

const dir = mkdtempSync(join(tmpdir(), 'qf-stages-'));

interface Ran {
  progress: (number | undefined)[];
  lines: ProgressLine[];
  at: number[];
  output: { stream: string; line: string }[];
  ended: 'resolved' | 'rejected';
  error?: unknown;
}

/** Runs `script` (sh -c) as a stage; returns its progress calls, its output and how it ended. */
const runStage = (
  script: string,
  opts: { abortAfterMs?: number; workMs?: number; stage?: Partial<PipelineStage>; resumeToken?: string } = {},
): Promise<Ran> => {
  const ran: Ran = { progress: [], lines: [], at: [], output: [], ended: 'resolved' };
  const started = performance.now();
  const abort = new AbortController();
  const ctx: StageContext = {
    taskId: 't1',
    stage: { name: 'transcode', retries: 0, command: ['/bin/sh', '-c', script], ...opts.stage },
    attempt: 2,
    taskFile: join(dir, 'task.json'),
    inputDir: join(dir, 'stages'),
    outputDir: join(dir, 'stages', 'transcode'),
    ...(opts.resumeToken === undefined ? {} : { resumeToken: opts.resumeToken }),
    selfTest: false,
    workMs: opts.workMs ?? 100,
    signal: abort.signal,
    onProgress: (report) => {
      ran.progress.push(report.cpuMs);
      if (report.line !== undefined) ran.lines.push(report.line);
      ran.at.push(performance.now() - started);
    },
    onOutput: (stream, line) => ran.output.push({ stream, line }),
    pollMs: 50,
    killGraceMs: 200,
  };
  if (opts.abortAfterMs !== undefined) setTimeout(() => abort.abort(), opts.abortAfterMs);
  return commandStage(ctx).then(
    () => ran,
    (error: unknown) => ({ ...ran, ended: 'rejected' as const, error }),
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

  it('counts each progress line as progress, with its fraction and token, and logs other lines', async () => {
    const { lines, output } = await runStage(
      'for i in 1 2 3; do echo "progress 0.$i seg-$i"; echo "step $i"; sleep 0.1; done',
    );
    expect(lines).toEqual([
      { fraction: 0.1, token: 'seg-1' },
      { fraction: 0.2, token: 'seg-2' },
      { fraction: 0.3, token: 'seg-3' },
    ]);
    expect(output).toEqual([1, 2, 3].map((i) => ({ stream: 'stdout', line: `step ${i}` })));
  });

  it("logs every stderr line, and a failure's error ends with the last of them", async () => {
    const { output, ended, error } = await runStage('for i in $(seq 1 30); do echo "err $i" >&2; done; exit 3');
    expect(ended).toBe('rejected');
    expect(error).toBeInstanceOf(StageFailedError);
    expect(output.filter((o) => o.stream === 'stderr')).toHaveLength(30);
    const message = (error as Error).message;
    expect(message).toMatch(/^stage transcode exited with 3; stderr ends:\nerr 11\n/);
    expect(message.endsWith('err 30')).toBe(true);
    expect(message).not.toMatch(/err 10\n/);
  });

  it('tells exit 75 (try later) from a failure', async () => {
    const { error } = await runStage('exit 75');
    expect(error).toBeInstanceOf(StageTempFailError);
    expect(error).not.toBeInstanceOf(StageFailedError);
  });

  it('fails an attempt that runs past its timeout, and stops its processes', async () => {
    const t0 = performance.now();
    const { error } = await runStage('sleep 30', { stage: { timeoutSeconds: 0.3 } });
    expect(error).toBeInstanceOf(StageFailedError);
    expect((error as Error).message).toMatch(/ran past its timeout of 0.3 s/);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('counts CPU time as work only at 1% of a core or more since the last progress, and 200 ms', () => {
    // ffmpeg blocked on a stalled HTTP source wakes to poll: 10 ms of CPU in 19 s is no work.
    expect(isWork(10, 19_000)).toBe(false);
    // Nor is what it and a waiting node parent spend in the seconds after the stall: ticks and a GC.
    expect(isWork(30, 2_800)).toBe(false);
    expect(isWork(60, 4_700)).toBe(false);
    expect(isWork(250, 750)).toBe(true);
    fc.assert(
      fc.property(fc.nat(100_000), fc.nat(3_600_000), (spent, elapsed) => {
        expect(isWork(spent, elapsed)).toBe(spent >= 200 && spent * 100 >= elapsed);
      }),
    );
  });

  it('counts CPU time the command uses as progress', async () => {
    // Half a second of CPU, then a second alive: a poll must see 200 ms of it while the command runs.
    const { progress } = await runStage('i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done; sleep 1');
    expect(progress.some((p) => p !== undefined && p > 0)).toBe(true);
  });

  it("passes the contract's environment", async () => {
    const out = join(dir, 'env');
    await runStage(
      `echo "$TASK_FILE|$TASK_ID|$STAGE|$ATTEMPT|$INPUT_DIR|$OUTPUT_DIR|` +
        `$RESUME_TOKEN|$STAGE_WORK_MS|\${SELF_TEST:-no}" > ${out}`,
      { workMs: 1234, resumeToken: 'frame-96' },
    );
    const want = [
      join(dir, 'task.json'),
      't1',
      'transcode',
      '2',
      join(dir, 'stages'),
      join(dir, 'stages', 'transcode'),
      'frame-96',
      '1234',
      'no',
    ];
    expect(readFileSync(out, 'utf8').trim()).toBe(want.join('|'));
  });

  it('stops the whole process group on abort, a stopped grandchild included', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    // The grandchild stops itself: only SIGKILL (after the grace) can end it.
    const { ended } = await runStage(`sh -c 'echo $$ > ${pidFile}; kill -STOP $$; sleep 30' & sleep 30`, {
      abortAfterMs: 300,
    });
    expect(ended).toBe('resolved');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 400));
    const left = await readProc(grandchild);
    expect(left === null || left.state === 'Z').toBe(true);
  });
});
