import { ConflictError, FleetError } from '../../lib/core/errors';
import { KEYS } from '../../lib/core/keys';
import {
  checkpointSchema,
  stageOutputSchema,
  type Artifact,
  type Checkpoint,
  type StageOutput,
} from '../../lib/core/schemas';
import type { TaskRunnerDeps } from './task-runner';

/** A write refused because a newer epoch already wrote: this worker is a zombie for the task. */
export class StaleEpochError extends FleetError {}

type RecordDeps = Pick<TaskRunnerDeps, 'store' | 'guard'> & { config: { nodeName: string } };

/** What a checkpoint write changes. */
export interface CheckpointChange {
  done: number;
  of: number;
  stage?: string;
  output?: Record<string, string>;
  artifacts?: Record<string, Artifact[]>;
  resumedFrom?: number;
  next?: Checkpoint['next'];
}

/**
 * Writes the checkpoint by CAS under this worker's epoch: `done` stages finished (never fewer
 * than stored), or with `next`, how the unfinished stage's attempts went.
 */
export const writeCheckpoint = async (
  deps: RecordDeps,
  taskId: string,
  epoch: number,
  change: CheckpointChange,
): Promise<void> => {
  const { result } = await deps.store.update(KEYS.checkpoint(taskId), checkpointSchema, (current) => {
    deps.guard();
    if (current !== null && current.epoch > epoch) return { value: null, result: 'stale' as const };
    const stages = Math.max(change.done, current?.stages ?? 0);
    const next: Checkpoint = {
      version: 1,
      taskId,
      stages,
      of: change.of,
      epoch,
      node: deps.config.nodeName,
      outputs: { ...current?.outputs, ...change.output },
      ...(current?.artifacts === undefined && change.artifacts === undefined
        ? {}
        : { artifacts: { ...current?.artifacts, ...change.artifacts } }),
      ...(change.stage === undefined
        ? current?.stage === undefined
          ? {}
          : { stage: current.stage }
        : { stage: change.stage }),
      ...(change.resumedFrom === undefined ? {} : { resumedFrom: change.resumedFrom }),
      ...(change.next === undefined
        ? change.stage === undefined && current?.next !== undefined
          ? { next: current.next }
          : {}
        : { next: change.next }),
    };
    return { value: next, result: 'ok' as const };
  });
  if (result === 'stale')
    throw new StaleEpochError(`${taskId}: a newer epoch checkpointed this task; epoch ${epoch} may not write`);
};

/**
 * A stage's output record, never written blindly (nodes may write outputs/ only conditionally,
 * resources/node-iam.yml): created when absent, as usual; a repeated stage (a resumed or
 * retried task) replaces it by CAS, unless a newer epoch wrote it: then this worker is a zombie.
 */
export const writeOutput = async (deps: RecordDeps, key: string, output: StageOutput): Promise<void> => {
  try {
    await deps.store.create(key, output);
    return;
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
  const { result } = await deps.store.update(
    key,
    stageOutputSchema,
    (current) => {
      deps.guard();
      return current !== null && current.epoch > output.epoch
        ? { value: null, result: 'stale' as const }
        : { value: output, result: 'ok' as const };
    },
    // A damaged record is nobody's input: replaced by CAS on its own ETag.
    () => Promise.resolve(),
  );
  if (result === 'stale')
    throw new StaleEpochError(
      `${output.taskId}: a newer epoch wrote the ${output.stage} output; epoch ${output.epoch} may not write`,
    );
};
