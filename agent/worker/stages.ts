import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../lib/core/config';
import type { Stage } from '../../lib/core/schemas';
import { sleep } from '../../lib/sleep';
import { killGroup, stopGroup } from '../runtime/child-process';
import { processTree } from '../proc';

/** What a stage is given: the task, how long its share of the work is, where to write. */
export interface StageContext {
  taskId: string;
  stage: Stage;
  /** Synthetic work for this stage, in ms (the module stages; commands get it as STAGE_WORK_MS). */
  workMs: number;
  outputFile: string;
  /** Aborts the stage: a command's process group gets SIGTERM, then SIGKILL after `killGraceMs`. */
  signal: AbortSignal;
  /** Called each time the stage does work: it reported progress, or its processes used CPU. */
  onProgress: (stageCpuMs?: number) => void;
  /** How often a command's CPU time is read. */
  pollMs: number;
  killGraceMs: number;
}

export type StageRunner = (ctx: StageContext) => Promise<void>;

const TICKS_PER_STAGE = 12;

/** The built-in stage: its share of the task's work in small ticks, each one reported progress. */
export const syntheticStage: StageRunner = async (ctx) => {
  for (let tick = 0; tick < TICKS_PER_STAGE; tick++) {
    await sleep(ctx.workMs / TICKS_PER_STAGE, ctx.signal);
    if (ctx.signal.aborted) return;
    ctx.onProgress();
  }
};

/**
 * A stage as an external command (argv, no shell, nothing interpolated), in a process group of
 * its own. It progresses only when it does work: each line it writes to stdout is reported
 * progress, and CPU time used by its processes since the last poll counts too. A command that
 * sleeps, blocks on a dead socket or is stopped makes no progress, however long it lives.
 */
export const commandStage =
  (argv: readonly string[]): StageRunner =>
  (ctx) =>
    new Promise((resolve, reject) => {
      const [file, ...args] = argv;
      if (file === undefined) return reject(new Error(`stage ${ctx.stage}: empty command`));
      mkdirSync(dirname(ctx.outputFile), { recursive: true });
      const child = spawn(file, args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, TASK_ID: ctx.taskId, STAGE: ctx.stage, OUTPUT_FILE: ctx.outputFile, STAGE_WORK_MS: String(Math.round(ctx.workMs)) },
      });
      let cpuMs = 0;
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.includes(10)) ctx.onProgress();
      });
      const poll = setInterval(() => {
        void processTree(child.pid ?? 0).then((tree) => {
          const used = tree.reduce((sum, p) => sum + p.cpuMs, 0);
          if (used > cpuMs) {
            cpuMs = used;
            ctx.onProgress(used);
          }
        });
      }, ctx.pollMs);
      let cancelKill = (): void => undefined;
      const abort = (): void => {
        cancelKill = stopGroup(child.pid, ctx.killGraceMs);
      };
      ctx.signal.addEventListener('abort', abort, { once: true });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        clearInterval(poll);
        cancelKill();
        ctx.signal.removeEventListener('abort', abort);
        // The group may outlive its leader: nothing of an aborted stage keeps running.
        if (ctx.signal.aborted) killGroup(child.pid, 'SIGKILL');
        if (code === 0 || ctx.signal.aborted) resolve();
        else reject(new Error(`stage ${ctx.stage} ${signal === null ? `exited with ${code ?? '?'}` : `killed by ${signal}`}`));
      });
    });

/** The runner of each stage: a configured command, or the synthetic module. */
export const stageRunnerFor = (config: Pick<Config, 'stageCommands'>, stage: Stage): StageRunner => {
  const argv = config.stageCommands?.[stage];
  return argv === undefined ? syntheticStage : commandStage(argv);
};
