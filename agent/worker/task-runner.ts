import type { Config } from '../../lib/core/config';
import { ConflictError, describeError } from '../../lib/core/errors';
import { KEYS } from '../../lib/core/keys';
import { pipelineOf, type PipelineStage, type ProgressLine } from '../../lib/core/pipeline';
import {
  checkpointSchema,
  doneSchema,
  workSecondsOf,
  type Artifact,
  type Checkpoint,
  type Done,
  type TaskMessage,
} from '../../lib/core/schemas';
import { randomUUID } from 'node:crypto';
import { BadArtifactError, type ArtifactStore } from '../../lib/aws/artifacts';
import type { QueueMessage, TaskQueue } from '../../lib/aws/queue';
import type { StateStore } from '../../lib/aws/state-store';
import type { Logger } from '../../lib/log';
import { StageFailedError, StageTempFailError, stageRunnerFor } from './stages';
import { Workspace } from './workspace';
import { StaleEpochError, writeCheckpoint, writeOutput } from './task-records';

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
  /** Where stages' artifacts go up and come down; without one they stay on the node. */
  artifacts?: ArtifactStore | null;
}

/** What the worker learns as a task advances (it keeps the registry). */
export interface TaskEvents {
  resumed(fromStage: number, name: string): void;
  progress(stage: string, report: { cpuMs?: number; line?: ProgressLine }): void;
  checkpointed(stages: number, of: number): void;
  done(winner: Done, first: boolean): void;
}

export type TaskOutcome = 'done' | 'already-done' | 'aborted';

/** One stage of one task, where the pipeline is at: `next` is the checkpoint's word on its earlier attempts. */
interface StageAt {
  task: TaskMessage;
  space: Workspace;
  stage: PipelineStage;
  index: number;
  of: number;
  epoch: number;
  signal: AbortSignal;
  on: TaskEvents;
  next?: Checkpoint['next'];
}

/**
 * One task through the seed's stages: skip it if `done.json` exists; resume after the last
 * checkpoint; after each stage write its output (keyed by task id, so a repeat replaces it) and
 * a checkpoint by CAS carrying this worker's epoch; then create `done.json` with
 * If-None-Match: * and only then delete the message.
 */
export class TaskRunner {
  constructor(private readonly deps: TaskRunnerDeps) {}

  /**
   * `signal` aborts at once (fencing); `drain` stops after the current stage is checkpointed
   * (SIGTERM), so a restart resumes from there instead of from the first stage.
   */
  async run(
    task: TaskMessage,
    message: QueueMessage,
    epoch: number,
    signal: AbortSignal,
    drain: AbortSignal,
    on: TaskEvents,
  ): Promise<TaskOutcome> {
    const { store, queue, config, guard } = this.deps;
    const { taskId } = task;
    const existing = await store.read(KEYS.done(taskId), doneSchema);
    if (existing !== null) {
      on.done(existing.value, false);
      guard();
      await queue.delete(message.receiptHandle, this.deps.deadline());
      return 'already-done';
    }
    const saved = await store.read(KEYS.checkpoint(taskId), checkpointSchema);
    if (saved !== null && saved.value.epoch > epoch)
      throw new StaleEpochError(`${taskId}: checkpointed by epoch ${saved.value.epoch}, this worker holds ${epoch}`);
    const pipeline = pipelineOf(config);
    const from = saved?.value.stages ?? 0;
    if (from > 0) on.resumed(from, pipeline[from]?.name ?? '?');
    const space = Workspace.of(config.dataDir, taskId);
    await space.open(message.body);
    let next = saved?.value.next;
    const artifacts = { ...saved?.value.artifacts };
    const at = (i: number): StageAt => ({
      task,
      space,
      stage: pipeline[i],
      index: i,
      of: pipeline.length,
      epoch,
      signal,
      on,
    });
    for (let i = from; i < pipeline.length; i++) {
      const stage = pipeline[i];
      if ((await this.inputs(at(i), pipeline, artifacts)) === 'aborted') return 'aborted';
      const outcome = await this.stage({ ...at(i), ...(next?.stage === stage.name ? { next } : {}) });
      if (outcome === 'aborted') return 'aborted';
      next = undefined;
      guard();
      const uploaded = await this.upload(at(i), artifacts);
      const outputKey = KEYS.output(taskId, stage.name);
      await writeOutput(this.deps, outputKey, { taskId, stage: stage.name, node: config.nodeName, epoch });
      await writeCheckpoint(this.deps, taskId, epoch, {
        done: i + 1,
        of: pipeline.length,
        stage: stage.name,
        output: { [stage.name]: outputKey },
        ...uploaded,
        ...(i === from && from > 0 ? { resumedFrom: from } : {}),
      });
      on.checkpointed(i + 1, pipeline.length);
      if (drain.aborted && i + 1 < pipeline.length) return 'aborted';
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

  /** Uploads the stage's OUTPUT_DIR (before its checkpoint names it); `artifacts` learns them. */
  private async upload(
    at: StageAt,
    artifacts: Record<string, Artifact[]>,
  ): Promise<{ artifacts?: Record<string, Artifact[]> }> {
    const store = this.deps.artifacts;
    if (store === undefined || store === null) return {};
    const tag = `e${at.epoch}-${randomUUID().slice(0, 8)}`;
    const files = await store.upload(at.task.taskId, at.stage.name, tag, at.space.outputDir(at.stage.name), at.signal);
    artifacts[at.stage.name] = files;
    return { artifacts: { [at.stage.name]: files } };
  }

  /**
   * Brings the earlier stages' artifacts into INPUT_DIR where this node does not have them (another
   * node ran those stages). One missing or corrupt is never passed on: its stage runs again here,
   * and its new artifacts replace the bad ones in the checkpoint.
   */
  private async inputs(
    at: StageAt,
    pipeline: readonly PipelineStage[],
    artifacts: Record<string, Artifact[]>,
  ): Promise<'done' | 'aborted'> {
    const store = this.deps.artifacts;
    if (store === undefined || store === null) return 'done';
    for (let j = 0; j < at.index; j++) {
      const earlier = pipeline[j];
      const files = artifacts[earlier.name];
      if (files === undefined) continue;
      try {
        await store.download(earlier.name, files, at.space.outputDir(earlier.name), at.signal);
        continue;
      } catch (error) {
        if (!(error instanceof BadArtifactError)) throw error;
        this.deps.log.warn(
          { taskId: at.task.taskId, stage: earlier.name, err: describeError(error) },
          'an artifact is missing or corrupt: its stage runs again',
        );
      }
      const redo: StageAt = { ...at, stage: earlier, index: j };
      if ((await this.stage(redo)) === 'aborted') return 'aborted';
      this.deps.guard();
      const uploaded = await this.upload(redo, artifacts);
      await writeCheckpoint(this.deps, at.task.taskId, at.epoch, { done: at.index, of: at.of, ...uploaded });
    }
    return 'done';
  }

  /**
   * The attempts at one stage: its `retries` on this node, each attempt's end that was no
   * success recorded in the checkpoint (ATTEMPT and RESUME_TOKEN of the next one, on any node).
   */
  private async stage(at: StageAt): Promise<'done' | 'aborted'> {
    const { task, space, stage, index, of, epoch, signal, next, on } = at;
    const { config, log } = this.deps;
    let attempts = next?.attempts ?? 0;
    let token = next?.token;
    for (let tries = 0; ; tries++) {
      const attempt = attempts + 1;
      const where = { taskId: task.taskId, stage: stage.name, attempt };
      let reported = token;
      // Starting an attempt is progress: the hang check then times this stage by its own limit.
      on.progress(stage.name, {});
      // One line per start: a drill counts them, so a stage run twice (progress thrown away) shows.
      log.info({ ...where, stageStart: true }, 'stage started');
      try {
        await stageRunnerFor(stage)({
          taskId: task.taskId,
          stage,
          attempt,
          taskFile: space.taskFile,
          inputDir: space.inputDir,
          outputDir: await space.stageDir(stage.name, token !== undefined),
          ...(token === undefined ? {} : { resumeToken: token }),
          selfTest: false,
          workMs: (workSecondsOf(task) * 1000) / of,
          signal,
          pollMs: Math.max(20, Math.min(1000, (config.sampleIntervalSeconds * 1000) / 4)),
          killGraceMs: Math.max(100, (config.workerStopTimeoutSeconds * 1000) / 6),
          onProgress: (report) => {
            if (report.line?.token !== undefined) reported = report.line.token;
            on.progress(stage.name, report);
          },
          // At info, stderr too: media tools write their normal chatter there.
          onOutput: (stream, line) => log.info({ ...where, stream }, line),
        });
      } catch (error) {
        if (!(error instanceof StageFailedError || error instanceof StageTempFailError)) throw error;
        attempts = attempt;
        token = reported;
        await writeCheckpoint(this.deps, task.taskId, epoch, {
          done: index,
          of,
          next: { stage: stage.name, attempts, ...(token === undefined ? {} : { token }) },
        });
        if (error instanceof StageFailedError && tries < stage.retries) {
          log.warn({ ...where, err: describeError(error) }, 'stage failed; retried on this node');
          continue;
        }
        throw error;
      }
      if (!signal.aborted) return 'done';
      // Stopped (hung, fenced, stopping): a token it reported is kept for the next attempt when it may still write.
      if (reported !== undefined && reported !== token) {
        await writeCheckpoint(this.deps, task.taskId, epoch, {
          done: index,
          of,
          next: { stage: stage.name, attempts: attempt, token: reported },
        }).catch(() => undefined);
      }
      return 'aborted';
    }
  }
}
