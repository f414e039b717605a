import { join } from 'node:path';
import type { Config } from '../../lib/core/config';
import { describeError } from '../../lib/core/errors';
import { STAGES } from '../../lib/core/schemas';
import type { Logger } from '../../lib/log';
import { bootId } from '../runtime/boot';
import { mono } from '../runtime/clock';
import { proofPath, writeJsonAtomic, type Proof } from '../registry';
import { stageRunnerFor } from './stages';

/** Synthetic work per stage of a self-test: enough to start each stage, nothing to speak of. */
const SELF_TEST_WORK_MS = 5;

/**
 * Runs one task of no consequence through every stage, as a real task would go (the same
 * runners, the configured commands included), writing only below `<dataDir>/self-test/`: no
 * message, no S3, no checkpoint. It must finish within `timeoutMs`. Writes the proof either way,
 * naming `worker` (this process, `pid:startTicks`) when given.
 */
export const selfTest = async (config: Pick<Config, 'dataDir' | 'stageCommands' | 'workerStopTimeoutSeconds'>, timeoutMs: number, log: Logger, worker?: string): Promise<Proof> => {
  const who = worker === undefined ? {} : { worker };
  const signal = AbortSignal.timeout(timeoutMs);
  let proof: Proof;
  try {
    for (const stage of STAGES) {
      await stageRunnerFor(config, stage)({
        taskId: 'self-test',
        stage,
        workMs: SELF_TEST_WORK_MS,
        outputFile: join(config.dataDir, 'self-test', stage),
        signal,
        onProgress: () => undefined,
        pollMs: Math.max(20, timeoutMs / 10),
        killGraceMs: Math.max(100, (config.workerStopTimeoutSeconds * 1000) / 6),
      });
      if (signal.aborted) throw new Error(`stage ${stage} did not finish within ${timeoutMs} ms`);
    }
    proof = { boot: bootId(), at: mono(), ok: true, ...who };
  } catch (error) {
    proof = { boot: bootId(), at: mono(), ok: false, detail: describeError(error).slice(0, 500), ...who };
    log.warn({ err: proof.detail }, 'self-test failed: this node is not a ready standby');
  }
  await writeJsonAtomic(proofPath(config.dataDir), proof);
  return proof;
};
