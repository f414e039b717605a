import { spawn } from 'node:child_process';
import type { Config } from '../../lib/core/config';
import type { Stage } from '../../lib/core/schemas';
import { sleep } from '../../lib/sleep';
import { readProc } from '../proc';

/** What a stage is given: the task, how long its share of the work is, where to write. */
export interface StageContext {
  taskId: string;
  stage: Stage;
  /** Synthetic work for this stage, in ms (the module stages). */
  workMs: number;
  outputFile: string;
  signal: AbortSignal;
  /** Called as the stage advances: a tick of progress, and the CPU time of its process if any. */
  onProgress: (stageCpuMs?: number) => void;
}

export type StageRunner = (ctx: StageContext) => Promise<void>;

const TICKS_PER_STAGE = 12;

/** The built-in stage: its share of the task's work in small ticks, each one progress. */
export const syntheticStage: StageRunner = async (ctx) => {
  for (let tick = 0; tick < TICKS_PER_STAGE; tick++) {
    await sleep(ctx.workMs / TICKS_PER_STAGE, ctx.signal);
    if (ctx.signal.aborted) return;
    ctx.onProgress();
  }
};

/**
 * A stage as an external command (argv, no shell, nothing interpolated): progress is the CPU
 * time its process uses, so a long transcode that advances is not taken for a stall.
 */
export const commandStage =
  (argv: readonly string[]): StageRunner =>
  (ctx) =>
    new Promise((resolve, reject) => {
      const [file, ...args] = argv;
      if (file === undefined) return reject(new Error(`stage ${ctx.stage}: empty command`));
      const child = spawn(file, args, { stdio: 'ignore', env: { ...process.env, TASK_ID: ctx.taskId, STAGE: ctx.stage, OUTPUT_FILE: ctx.outputFile } });
      const poll = setInterval(() => {
        void readProc(child.pid ?? 0).then((p) => p !== null && ctx.onProgress(p.cpuMs));
      }, 1000);
      const abort = (): void => {
        child.kill('SIGTERM');
      };
      ctx.signal.addEventListener('abort', abort, { once: true });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        clearInterval(poll);
        ctx.signal.removeEventListener('abort', abort);
        if (code === 0 || ctx.signal.aborted) resolve();
        else reject(new Error(`stage ${ctx.stage} ${signal === null ? `exited with ${code ?? '?'}` : `killed by ${signal}`}`));
      });
    });

/** The runner of each stage: a configured command, or the synthetic module. */
export const stageRunnerFor = (config: Pick<Config, 'stageCommands'>, stage: Stage): StageRunner => {
  const argv = config.stageCommands?.[stage];
  return argv === undefined ? syntheticStage : commandStage(argv);
};
