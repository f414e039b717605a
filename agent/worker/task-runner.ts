import { join } from 'node:path';
import type { Config } from '../../lib/core/config';
import { ConflictError, FleetError } from '../../lib/core/errors';
import { KEYS } from '../../lib/core/keys';
import { checkpointSchema, doneSchema, STAGES, stageOutputSchema, type Checkpoint, type Done, type StageOutput } from '../../lib/core/schemas';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { StateStore } from '../../lib/aws/state-store';
import type { Logger } from '../../lib/log';
import { stageRunnerFor } from './stages';

/** A write refused because a newer epoch already wrote: this worker is a zombie for the task. */
export class StaleEpochError extends FleetError {}

export interface TaskRunnerDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  queue: TaskQueue;
  log: Logger;
  now: () => number;
  /**
   * Throws FencedError unless this worker may still act under its lease: called right before
   * every write and acknowledgement, so a worker that was frozen past its lease sends nothing.
   */
  guard: () => void;
  /** Aborts when the lease this worker acts under ends (LeaseView.deadline). */
  deadline: () => AbortSignal;
}

/** What the worker learns as a task advances (it keeps the registry). */
export interface TaskEvents {
  resumed(fromStage: number): void;
  progress(stage: number, stageCpuMs?: number): void;
  checkpointed(stages: number): void;
  done(winner: Done, first: boolean): void;
}

export type TaskOutcome = 'done' | 'already-done' | 'aborted';

/**
 * One task through the seed's stages: skip it if `done.json` exists; resume after the last
 * checkpoint; after each stage write its output (keyed by task id, so a repeat replaces it) and
 * a checkpoint by CAS carrying this worker's epoch; then create `done.json` with
 * If-None-Match: * and only then delete the message.
 */
export class TaskRunner {
  constructor(private readonly deps: TaskRunnerDeps) {}

  private async checkpoint(taskId: string, epoch: number, stages: number, outputs: Record<string, string>, resumedFrom?: number): Promise<void> {
    const { result } = await this.deps.store.update(KEYS.checkpoint(taskId), checkpointSchema, (current) => {
      this.deps.guard();
      if (current !== null && current.epoch > epoch) return { value: null, result: 'stale' as const };
      const next: Checkpoint = {
        version: 1,
        taskId,
        stages: Math.max(stages, current?.stages ?? 0),
        epoch,
        node: this.deps.config.nodeName,
        outputs: { ...current?.outputs, ...outputs },
        ...(resumedFrom === undefined ? {} : { resumedFrom }),
      };
      return { value: next, result: 'ok' as const };
    });
    if (result === 'stale') throw new StaleEpochError(`${taskId}: a newer epoch checkpointed this task; epoch ${epoch} may not write`);
  }

  /**
   * A stage's output record, never written blindly (nodes may write outputs/ only conditionally,
   * resources/node-iam.yml): created when absent, as usual; a repeated stage (a resumed or
   * retried task) replaces it by CAS, unless a newer epoch wrote it: then this worker is a zombie.
   */
  private async writeOutput(key: string, output: StageOutput): Promise<void> {
    try {
      await this.deps.store.create(key, output);
      return;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    const { result } = await this.deps.store.update(
      key,
      stageOutputSchema,
      (current) => {
        this.deps.guard();
        return current !== null && current.epoch > output.epoch ? { value: null, result: 'stale' as const } : { value: output, result: 'ok' as const };
      },
      // A damaged record is nobody's input: replaced by CAS on its own ETag.
      () => Promise.resolve(),
    );
    if (result === 'stale') throw new StaleEpochError(`${output.taskId}: a newer epoch wrote the ${output.stage} output; epoch ${output.epoch} may not write`);
  }

  /**
   * `signal` aborts at once (fencing); `drain` stops after the current stage is checkpointed
   * (SIGTERM), so a restart resumes from there instead of from the first stage.
   */
  async run(taskId: string, workSeconds: number, message: QueueMessage, epoch: number, signal: AbortSignal, drain: AbortSignal, on: TaskEvents): Promise<TaskOutcome> {
    const { store, queue, config, guard } = this.deps;
    const existing = await store.read(KEYS.done(taskId), doneSchema);
    if (existing !== null) {
      on.done(existing.value, false);
      guard();
      await queue.delete(message.receiptHandle, this.deps.deadline());
      return 'already-done';
    }
    const saved = await store.read(KEYS.checkpoint(taskId), checkpointSchema);
    if (saved !== null && saved.value.epoch > epoch) throw new StaleEpochError(`${taskId}: checkpointed by epoch ${saved.value.epoch}, this worker holds ${epoch}`);
    const from = saved?.value.stages ?? 0;
    if (from > 0) on.resumed(from);
    const pollMs = Math.max(20, Math.min(1000, (config.sampleIntervalSeconds * 1000) / 4));
    for (let stage = from; stage < STAGES.length; stage++) {
      const name = STAGES[stage] ?? 'delivery';
      const outputKey = KEYS.output(taskId, name);
      await stageRunnerFor(config, name)({
        taskId,
        stage: name,
        workMs: (workSeconds * 1000) / STAGES.length,
        outputFile: join(config.dataDir, 'outputs', `${taskId}.${name}`),
        signal,
        pollMs,
        killGraceMs: Math.max(100, (config.workerStopTimeoutSeconds * 1000) / 6),
        onProgress: (cpu) => on.progress(stage, cpu),
      });
      if (signal.aborted) return 'aborted';
      guard();
      await this.writeOutput(outputKey, { taskId, stage: name, node: config.nodeName, epoch });
      await this.checkpoint(taskId, epoch, stage + 1, { [name]: outputKey }, stage === from && from > 0 ? from : undefined);
      on.checkpointed(stage + 1);
      if (drain.aborted && stage + 1 < STAGES.length) return 'aborted';
    }
    const done: Done = { version: 1, taskId, node: config.nodeName, epoch, finishedAt: this.deps.now() };
    let first = true;
    try {
      guard();
      await store.create(KEYS.done(taskId), done);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      first = false;
    }
    const winner = first ? done : ((await store.read(KEYS.done(taskId), doneSchema))?.value ?? done);
    on.done(winner, first);
    // The message goes only after the completion is durable: a crash before this line repeats
    // the task, and the repeat finds done.json and stops there.
    guard();
    await queue.delete(message.receiptHandle, this.deps.deadline());
    return 'done';
  }
}
