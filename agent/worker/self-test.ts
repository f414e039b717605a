import { join } from 'node:path';
import type { Config } from '../../lib/core/config';
import { describeError } from '../../lib/core/errors';
import { pipelineOf } from '../../lib/core/pipeline';
import type { Logger } from '../../lib/log';
import { bootId } from '../runtime/boot';
import { mono } from '../runtime/clock';
import { proofPath, writeJsonAtomic, type Proof } from '../registry';
import { stageRunnerFor } from './stages';
import { Workspace } from './workspace';

/** Synthetic work per stage of a self-test: enough to start each stage, nothing to speak of. */
const SELF_TEST_WORK_MS = 5;
/** The sample task a self-test runs: no payload of any producer's, so a stage knows to do a quick check. */
export const SELF_TEST_BODY = JSON.stringify({ taskId: 'self-test', payload: { selfTest: true } });

/**
 * Runs the sample task through every stage, as a real task would go (the same runners, the
 * configured commands with SELF_TEST=1, each stage's output the next one's input), writing only
 * below `<dataDir>/self-test/`: no message, no S3, no checkpoint. It must finish within
 * `timeoutMs`. Writes the proof either way, naming `worker` (this process, `pid:startTicks`).
 */
export const selfTest = async (
  config: Pick<Config, 'dataDir' | 'pipeline' | 'stageCommands' | 'workerStopTimeoutSeconds'>,
  timeoutMs: number,
  log: Logger,
  worker?: string,
): Promise<Proof> => {
  const who = worker === undefined ? {} : { worker };
  const signal = AbortSignal.timeout(timeoutMs);
  let proof: Proof;
  try {
    const space = new Workspace(join(config.dataDir, 'self-test'));
    space.discard();
    await space.open(SELF_TEST_BODY);
    for (const stage of pipelineOf(config)) {
      await stageRunnerFor(stage)({
        taskId: 'self-test',
        stage,
        attempt: 1,
        taskFile: space.taskFile,
        inputDir: space.inputDir,
        outputDir: await space.stageDir(stage.name, false),
        selfTest: true,
        workMs: SELF_TEST_WORK_MS,
        signal,
        onProgress: () => undefined,
        onOutput: () => undefined,
        pollMs: Math.max(20, timeoutMs / 10),
        killGraceMs: Math.max(100, (config.workerStopTimeoutSeconds * 1000) / 6),
      });
      if (signal.aborted) throw new Error(`stage ${stage.name} did not finish within ${timeoutMs} ms`);
    }
    proof = { boot: bootId(), at: mono(), ok: true, ...who };
  } catch (error) {
    proof = { boot: bootId(), at: mono(), ok: false, detail: describeError(error).slice(0, 500), ...who };
    log.warn({ err: proof.detail }, 'self-test failed: this node is not a ready standby');
  }
  await writeJsonAtomic(proofPath(config.dataDir), proof);
  return proof;
};
