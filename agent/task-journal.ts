import { open, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { taskIdSchema } from '../lib/core/schemas';
import { parseJsonText, parseWith } from '../lib/core/validate';
import type { Logger } from '../lib/log';
import { mergeEntry, mergeTasks, taskEntrySchema, type TaskEntry, type TaskMap } from '../lib/core/sync/manifest';
import { readJsonFile, registryPath, registrySchema, writeJsonAtomic } from './registry';

/**
 * What the worker knows of each task, handed to the agent at the cost of what changed (else
 * a quiet peer-sync round would be re-reading, re-validating and re-hashing 100,000 tasks):
 *
 * - `tasks-<g>.json`, a snapshot of generation `g`, written whole, atomically;
 * - `tasks-<g>.log`, the journal of changes since that snapshot: one line per change, the task's
 *   entry after it, `["<task id>", {…}]`, appended by the worker. Each append starts with a
 *   newline: what an append that failed or was killed left half-written becomes a line of its
 *   own, skipped as damaged, and never swallows the next one (the property test found that);
 * - `registry.json` (small, rewritten on change) names the current generation.
 *
 * The agent reads the journal from where it stopped, whole lines only, and reads
 * the snapshot only when the generation moved. The worker starts a new generation (compaction)
 * when it starts and when the journal outgrows the snapshot: the new snapshot and an empty journal
 * first, then `registry.json`, then the old files go. Entries merge as a join, so reading a
 * change twice, or the same task from the snapshot and the journal, changes nothing.
 */
export const snapshotPath = (dataDir: string, generation: number): string => `${dataDir}/tasks-${generation}.json`;
export const journalPath = (dataDir: string, generation: number): string => `${dataDir}/tasks-${generation}.log`;

export const snapshotSchema = z.strictObject({
  version: z.literal(1),
  generation: z.number().int().min(0),
  tasks: z.record(taskIdSchema, taskEntrySchema),
});

const lineSchema = z.tuple([taskIdSchema, taskEntrySchema]);

/** The journal lines of `text` that parse; a damaged one is skipped and counted, never fatal. */
export const parseJournal = (text: string): { tasks: Record<string, TaskEntry>; damaged: number } => {
  const tasks: Record<string, TaskEntry> = {};
  let damaged = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const [id, entry] = parseWith(lineSchema, parseJsonText(line, 'journal line'), 'journal line');
      const before = tasks[id];
      tasks[id] = before === undefined ? entry : mergeEntry(before, entry);
    } catch {
      damaged++;
    }
  }
  return { tasks, damaged };
};

export const journalLine = (taskId: string, entry: TaskEntry): string => `${JSON.stringify([taskId, entry])}\n`;

/**
 * Reads a generation whole: its snapshot (absent: empty) merged with its journal. A damaged
 * snapshot is named in `snapshotDamaged` and read as empty, never thrown: the fleet's copy of
 * every task is the S3 manifest, and a reader that threw would stop peer-sync at every round.
 */
export const readGeneration = async (
  dataDir: string,
  generation: number,
): Promise<{
  tasks: Record<string, TaskEntry>;
  journalBytes: number;
  damaged: number;
  snapshotDamaged: string | null;
}> => {
  let snapshotDamaged: string | null = null;
  const snapshot = await readFile(snapshotPath(dataDir, generation), 'utf8').then(
    (text) => {
      try {
        return parseWith(snapshotSchema, parseJsonText(text, 'task snapshot'), 'task snapshot').tasks;
      } catch (error) {
        snapshotDamaged = `task snapshot ${generation}: ${error instanceof Error ? error.message : String(error)}`;
        return {};
      }
    },
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return {};
      throw error;
    },
  );
  const journal = await readFile(journalPath(dataDir, generation), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const whole = journal.slice(0, journal.lastIndexOf('\n') + 1);
  const { tasks, damaged } = parseJournal(whole);
  const merged: Record<string, TaskEntry> = { ...snapshot };
  for (const [id, entry] of Object.entries(tasks))
    merged[id] = merged[id] === undefined ? entry : mergeEntry(merged[id], entry);
  return {
    tasks: merged,
    journalBytes: Buffer.byteLength(whole),
    damaged: damaged + (snapshotDamaged === null ? 0 : 1),
    snapshotDamaged,
  };
};

/** Writes generation `generation` from `tasks` and removes every older one's files. */
export const writeGeneration = async (dataDir: string, generation: number, tasks: TaskMap): Promise<void> => {
  await writeJsonAtomic(snapshotPath(dataDir, generation), { version: 1, generation, tasks });
  await writeFile(journalPath(dataDir, generation), '');
};

/** Removes the files of generations before `generation` (after `registry.json` names it). */
export const removeOlderGenerations = async (dataDir: string, generation: number): Promise<void> => {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^tasks-(\d+)\.(json|log)$/.exec(name);
    if (m !== null && Number(m[1]) < generation) await unlink(`${dataDir}/${name}`).catch(() => undefined);
  }
};

/**
 * The agent's side: each `read()` returns what changed since the last one, the whole generation
 * when it moved (or on the first read). Costs a `registry.json` read (the caller's) and a read of
 * the journal's new bytes.
 */
export class JournalReader {
  private generation: number | null = null;
  private offset = 0;

  constructor(private readonly dataDir: string) {}

  /** `generation`: what `registry.json` names now (null: the worker never wrote one). */
  async read(generation: number | null): Promise<{ tasks: Record<string, TaskEntry>; damaged: number }> {
    if (generation === null) return { tasks: {}, damaged: 0 };
    if (generation !== this.generation) {
      try {
        const whole = await readGeneration(this.dataDir, generation);
        this.generation = generation;
        this.offset = whole.journalBytes;
        return { tasks: whole.tasks, damaged: whole.damaged };
      } catch (error) {
        // Compacted again and removed meanwhile: the next read finds the newer generation.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { tasks: {}, damaged: 0 };
        throw error;
      }
    }
    return this.tail();
  }

  /** The journal's whole lines past the offset. */
  private async tail(): Promise<{ tasks: Record<string, TaskEntry>; damaged: number }> {
    let handle;
    try {
      handle = await open(journalPath(this.dataDir, this.generation ?? 0), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { tasks: {}, damaged: 0 };
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (size <= this.offset) return { tasks: {}, damaged: 0 };
      const buffer = Buffer.alloc(size - this.offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
      const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
      this.offset += end;
      return parseJournal(buffer.subarray(0, end).toString('utf8'));
    } finally {
      await handle.close();
    }
  }
}

/**
 * The agent's feed for peer-sync (`PeerSyncDeps.localChanges`): the generation `registry.json`
 * names, then what its journal gained since the last call; the tasks of a registry written
 * before the journal are merged in as well.
 */
export const localTaskFeed = (dataDir: string, log: Logger): (() => Promise<TaskMap>) => {
  const journal = new JournalReader(dataDir);
  return async () => {
    const registry = await readJsonFile(registryPath(dataDir), registrySchema).catch(() => null);
    const { tasks, damaged } = await journal.read(registry?.tasksGeneration ?? null);
    if (damaged > 0) log.warn({ damaged }, 'damaged task journal lines skipped');
    return registry?.tasks === undefined ? tasks : mergeTasks(registry.tasks, tasks);
  };
};
