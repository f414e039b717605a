import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A stage the worker stopped for doing no work: when (wall ms), which, and how long it did none (ms). */
export interface HungStop {
  atMs: number;
  taskId: string;
  stage: string;
  idleMs: number;
}

/**
 * The hung stages a node's worker stopped, from its JSON log: the hang rule's own clock, which
 * no cloud call shows (the give-back that follows does not say why).
 */
export const hungStops = async (dataDir: string): Promise<HungStop[]> => {
  const text = await readFile(join(dataDir, 'worker.log'), 'utf8').catch(() => '');
  const stops: HungStop[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"idleMs"')) continue;
    try {
      const e = JSON.parse(line) as Partial<HungStop> & { time?: number };
      if (typeof e.time === 'number' && typeof e.idleMs === 'number' && typeof e.taskId === 'string')
        stops.push({ atMs: e.time, taskId: e.taskId, stage: e.stage ?? '?', idleMs: e.idleMs });
    } catch {
      // A line cut short by a killed node is no stop.
    }
  }
  return stops;
};

/**
 * How often each task's stages started, on every node (task id, then stage): a stage resumed from
 * its checkpoint elsewhere starts once; one thrown away and run again shows a second start.
 */
export const stageStarts = async (dataDir: string): Promise<{ taskId: string; stage: string }[]> => {
  const text = await readFile(join(dataDir, 'worker.log'), 'utf8').catch(() => '');
  const starts: { taskId: string; stage: string }[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"stageStart":true')) continue;
    try {
      const e = JSON.parse(line) as { taskId?: unknown; stage?: unknown };
      if (typeof e.taskId === 'string' && typeof e.stage === 'string')
        starts.push({ taskId: e.taskId, stage: e.stage });
    } catch {
      // A line cut short by a killed node is no start.
    }
  }
  return starts;
};

/** Stage starts of every node, counted per task and stage. */
export const stageStartsOf = async (dataDirs: readonly string[]): Promise<Record<string, Record<string, number>>> => {
  const counts: Record<string, Record<string, number>> = {};
  for (const dir of dataDirs)
    for (const { taskId, stage } of await stageStarts(dir)) {
      const byStage = (counts[taskId] ??= {});
      byStage[stage] = (byStage[stage] ?? 0) + 1;
    }
  return counts;
};
