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
