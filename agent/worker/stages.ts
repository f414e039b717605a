import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FleetError } from '../../lib/core/errors';
import { EX_TEMPFAIL, parseProgressLine, type PipelineStage, type ProgressLine } from '../../lib/core/pipeline';
import { sleep } from '../../lib/sleep';
import { killGroup, stopGroup } from '../runtime/child-process';
import { processTree } from '../proc';
import { mono } from '../runtime/clock';

/** What a stage is given: the contract of docs/pipeline.md, and how the worker hears from it. */
export interface StageContext {
  taskId: string;
  stage: PipelineStage;
  /** 1 for the first attempt of this stage, counted across nodes through the checkpoint. */
  attempt: number;
  /** The message body as it was received, in a file. */
  taskFile: string;
  /** One folder per earlier stage, named after it. */
  inputDir: string;
  outputDir: string;
  resumeToken?: string;
  selfTest: boolean;
  /** Synthetic work for this stage, in ms (the synthetic stage; commands get it as STAGE_WORK_MS). */
  workMs: number;
  /** Aborts the stage: a command's process group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  signal: AbortSignal;
  /** Called each time the stage does work: a progress line, or CPU its processes used. */
  onProgress: (report: { cpuMs?: number; line?: ProgressLine }) => void;
  /** Each line the command writes, for the worker's log. */
  onOutput: (stream: 'stdout' | 'stderr', line: string) => void;
  /** How often a command's CPU time is read. */
  pollMs: number;
  killGraceMs: number;
}

export type StageRunner = (ctx: StageContext) => Promise<void>;

/** A stage that failed: counted toward the task's poison limit. `stderr` is the end of what it wrote there. */
export class StageFailedError extends FleetError {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(stderr === '' ? message : `${message}; stderr ends:\n${stderr}`);
  }
}

/** A stage that exited EX_TEMPFAIL (75): tried again later, no failure counted. */
export class StageTempFailError extends FleetError {}

const TICKS_PER_STAGE = 12;
/**
 * The percent of one core a stage's processes must have used since it last made progress for
 * their CPU time to count as progress: a blocked tool's periodic wake-ups stay well below it.
 */
export const MIN_CPU_PERCENT = 1;
/**
 * And at least 200 ms: a waiting tree still spends tens of ms, in whole 10 ms ticks, on wake-ups
 * and a runtime's garbage collection, which alone would pass 1% in the seconds after progress.
 */
export const MIN_CPU_MS = 200;

/** Whether `spentMs` of CPU over `elapsedMs` since a stage last made progress is progress. */
export const isWork = (spentMs: number, elapsedMs: number): boolean =>
  spentMs >= MIN_CPU_MS && spentMs * 100 >= MIN_CPU_PERCENT * elapsedMs;
/** What of a command's stderr goes into its failure: the last lines, each cut short. */
const TAIL_LINES = 20;
const TAIL_LINE_CHARS = 200;
const LOG_LINE_CHARS = 2000;

/** The built-in stage: its share of the task's work in small ticks, each one reported progress. */
export const syntheticStage: StageRunner = async (ctx) => {
  for (let tick = 0; tick < TICKS_PER_STAGE; tick++) {
    await sleep(ctx.workMs / TICKS_PER_STAGE, ctx.signal);
    if (ctx.signal.aborted) return;
    ctx.onProgress({ line: { fraction: (tick + 1) / TICKS_PER_STAGE } });
  }
};

/** The environment of docs/pipeline.md, over the worker's own. */
const stageEnv = (ctx: StageContext): NodeJS.ProcessEnv => ({
  ...process.env,
  TASK_FILE: ctx.taskFile,
  TASK_ID: ctx.taskId,
  STAGE: ctx.stage.name,
  ATTEMPT: String(ctx.attempt),
  INPUT_DIR: ctx.inputDir,
  OUTPUT_DIR: ctx.outputDir,
  STAGE_WORK_MS: String(Math.round(ctx.workMs)),
  // The one output file of earlier releases' stage commands.
  OUTPUT_FILE: join(ctx.outputDir, 'output'),
  ...(ctx.resumeToken === undefined ? {} : { RESUME_TOKEN: ctx.resumeToken }),
  ...(ctx.selfTest ? { SELF_TEST: '1' } : {}),
});

/**
 * A stage as an external command (argv, no shell, nothing interpolated), in a process group of
 * its own. It progresses only when it does work: a `progress` line on stdout, or CPU time used by
 * its processes since the last poll. A command that sleeps, blocks on a dead socket or is stopped
 * makes no progress, however long it lives. Exit 0 is done, 75 is "later", anything else fails.
 */
export const commandStage = (ctx: StageContext): Promise<void> =>
  new Promise((resolve, reject) => {
    const [file, ...args] = ctx.stage.command ?? [];
    if (file === undefined) return reject(new Error(`stage ${ctx.stage.name}: empty command`));
    const child = spawn(file, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: stageEnv(ctx) });
    const tail: string[] = [];
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      const progress = parseProgressLine(line);
      if (progress === null) ctx.onOutput('stdout', line.slice(0, LOG_LINE_CHARS));
      else ctx.onProgress({ line: progress });
    });
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
      ctx.onOutput('stderr', line.slice(0, LOG_LINE_CHARS));
      tail.push(line.slice(0, TAIL_LINE_CHARS));
      if (tail.length > TAIL_LINES) tail.shift();
    });
    let cpuMs = 0;
    let markedAt = mono();
    const poll = setInterval(() => {
      void processTree(child.pid ?? 0).then((tree) => {
        const used = tree.reduce((sum, p) => sum + p.cpuMs, 0);
        const now = mono();
        // Work, not a trickle: a tool polling a dead socket spends a tick now and then.
        if (isWork(used - cpuMs, now - markedAt)) {
          cpuMs = used;
          markedAt = now;
          ctx.onProgress({ cpuMs: used });
        }
      });
    }, ctx.pollMs);
    let cancelKill = (): void => undefined;
    let timedOut = false;
    const abort = (): void => {
      cancelKill = stopGroup(child.pid, ctx.killGraceMs);
    };
    const timeoutMs = ctx.stage.timeoutSeconds === undefined ? undefined : ctx.stage.timeoutSeconds * 1000;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), abort()), timeoutMs);
    ctx.signal.addEventListener('abort', abort, { once: true });
    child.once('error', (error) =>
      reject(new StageFailedError(`stage ${ctx.stage.name} did not start: ${error.message}`, '')),
    );
    // 'close', not 'exit': the last lines of stdout and stderr are read by then.
    child.once('close', (code, signal) => {
      clearInterval(poll);
      clearTimeout(timer);
      cancelKill();
      ctx.signal.removeEventListener('abort', abort);
      // The group may outlive its leader: nothing of a stopped stage keeps running.
      if (ctx.signal.aborted || timedOut) killGroup(child.pid, 'SIGKILL');
      const stderr = tail.join('\n');
      if (ctx.signal.aborted) resolve();
      else if (timedOut)
        reject(
          new StageFailedError(
            `stage ${ctx.stage.name} ran past its timeout of ${ctx.stage.timeoutSeconds ?? 0} s`,
            stderr,
          ),
        );
      else if (code === 0) resolve();
      else if (code === EX_TEMPFAIL)
        reject(new StageTempFailError(`stage ${ctx.stage.name} asked to be tried later (exit 75)`));
      else
        reject(
          new StageFailedError(
            `stage ${ctx.stage.name} ${signal === null ? `exited with ${code ?? '?'}` : `killed by ${signal}`}`,
            stderr,
          ),
        );
    });
  });

/** The runner of a stage: its command, or the synthetic stage. */
export const stageRunnerFor = (stage: PipelineStage): StageRunner =>
  stage.command === undefined ? syntheticStage : commandStage;
