import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { readJsonFile, registryPath, registrySchema, writeJsonAtomic } from '../../agent/registry';
import { journalPath, JournalReader, localTaskFeed, snapshotPath } from '../../agent/task-journal';
import { TaskBook } from '../../agent/worker/task-book';
import { hashTasks, mergeEntry, mergeTasks, type TaskEntry, type TaskMap } from '../../lib/core/sync/manifest';

const log = pino({ level: 'silent' });
const NOW = 1_000_000;
const DROP_MS = 30 * 86_400_000;

/** The agent's side, as agent.ts wires it. */
const readerOf = (dir: string): (() => Promise<TaskMap>) => localTaskFeed(dir, log);

type Op =
  | { kind: 'record'; id: string; change: Partial<TaskEntry> }
  | { kind: 'flush' }
  | { kind: 'read' }
  | { kind: 'restart' }
  | { kind: 'torn-write' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('record' as const),
      id: fc.constantFrom('t1', 't2', 't3', 't4', 't5', 't6'),
      change: fc.record({
        progress: fc.nat(100),
        stages: fc.nat(4),
        status: fc.constantFrom('running' as const, 'checkpointed' as const),
      }),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'read' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'torn-write' as const }) },
);

describe('the task journal: the worker hands the agent what changed', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-journal-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'whatever the order of changes, flushes, reads, restarts and ' +
      'torn writes, the agent ends up knowing what the worker knows',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(opArb, { maxLength: 60 }),
          fc.integer({ min: 2, max: 8 }),
          async (ops, compactAfter) => {
            const d = mkdtempSync(join(dir, 'p-'));
            let book = new TaskBook(d, log, compactAfter);
            await book.load(NOW, DROP_MS);
            const read = readerOf(d);
            let seen: TaskMap = {};
            // What the worker has flushed: the reference (a join, so folding changes in any grouping agrees).
            let flushed: Record<string, TaskEntry> = {};
            let unflushed: Record<string, TaskEntry> = {};
            for (const op of ops) {
              if (op.kind === 'record') {
                book.record(op.id, op.change);
                const before = unflushed[op.id] ??
                  flushed[op.id] ?? { status: 'queued', stages: 0, progress: 0, epoch: 0, done: null };
                unflushed[op.id] = mergeEntry(before, { ...before, ...op.change });
              } else if (op.kind === 'flush') {
                await book.flush([]);
                flushed = mergeTasks(flushed, unflushed);
                unflushed = {};
              } else if (op.kind === 'read') {
                seen = mergeTasks(seen, await read());
              } else if (op.kind === 'restart') {
                // The worker dies: what it had not flushed dies with it.
                unflushed = {};
                book = new TaskBook(d, log, compactAfter);
                await book.load(NOW, DROP_MS);
              } else {
                // Killed mid-append: half a line at the journal's end.
                const registry = await readJsonFile(registryPath(d), registrySchema);
                appendFileSync(journalPath(d, registry?.tasksGeneration ?? 0), '["t1",{"status":"runn');
              }
            }
            await book.flush([]);
            flushed = mergeTasks(flushed, unflushed);
            seen = mergeTasks(seen, await read());
            expect(hashTasks(seen)).toBe(hashTasks(flushed));
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it(
    'writes the in-flight progress to registry.json at every ' +
      'flush after a task moved (the stall rule reads it there)',
    async () => {
      const book = new TaskBook(dir, log);
      await book.load(NOW, DROP_MS);
      for (const progress of [5, 6, 7]) {
        book.record('t1', { status: 'running', progress });
        await book.flush([{ taskId: 't1', progress, stage: 'transcode' }]);
        expect((await readJsonFile(registryPath(dir), registrySchema))?.inFlight).toEqual([
          { taskId: 't1', progress, stage: 'transcode' },
        ]);
      }
    },
  );

  it('a read after a few changes returns those tasks only, not the whole registry', async () => {
    const book = new TaskBook(dir, log);
    await book.load(NOW, DROP_MS);
    for (let i = 0; i < 500; i++) book.record(`task-${i}`, { status: 'running', progress: 1 });
    await book.flush([]);
    const read = readerOf(dir);
    expect(Object.keys(await read())).toHaveLength(500);
    book.record('task-7', { progress: 9 });
    book.record('task-8', { progress: 9 });
    book.record('task-7', { progress: 10 });
    await book.flush([]);
    expect(await read()).toEqual({
      'task-7': expect.objectContaining({ progress: 10 }),
      'task-8': expect.objectContaining({ progress: 9 }),
    });
    expect(await read()).toEqual({});
  });

  it(
    'moves the tasks of a registry written before the journal ' +
      'into its first snapshot, and leaves one generation behind',
    async () => {
      const done: TaskEntry = {
        status: 'done',
        stages: 4,
        progress: 48,
        epoch: 1,
        done: { node: 'node-1', epoch: 1, at: NOW - 1000 },
      };
      await writeJsonAtomic(registryPath(dir), {
        version: 1,
        completedTotal: 1,
        recentCompletions: [],
        inFlight: [],
        tasks: { old: done },
      });
      const book = new TaskBook(dir, log, 2);
      await book.load(NOW, DROP_MS);
      for (let i = 0; i < 5; i++) {
        book.record(`t${i}`, { status: 'running' });
        await book.flush([]);
      }
      const registry = await readJsonFile(registryPath(dir), registrySchema);
      expect(registry?.tasks).toBeUndefined();
      expect(Object.keys(await readerOf(dir)()).sort()).toEqual(['old', 't0', 't1', 't2', 't3', 't4']);
      const g = registry?.tasksGeneration ?? -1;
      expect(
        readdirSync(dir)
          .filter((f) => f.startsWith('tasks-'))
          .sort(),
      ).toEqual([`tasks-${g}.json`, `tasks-${g}.log`]);
    },
  );

  it(
    'reads a damaged snapshot as empty, counted, ' +
      'and goes on with its journal; the next worker starts a clean generation',
    async () => {
      const book = new TaskBook(dir, log);
      await book.load(NOW, DROP_MS);
      const g = (await readJsonFile(registryPath(dir), registrySchema))?.tasksGeneration ?? 0;
      writeFileSync(snapshotPath(dir, g), '{"version":1,"gener');
      book.record('t2', { status: 'running' });
      await book.flush([]);
      const got = await new JournalReader(dir).read(g);
      expect(got).toEqual({ tasks: { t2: expect.objectContaining({ status: 'running' }) }, damaged: 1 });
      const next = new TaskBook(dir, log);
      expect(await next.load(NOW, DROP_MS)).toMatch(/^task snapshot \d+: /);
      expect(Object.keys(await readerOf(dir)())).toEqual(['t2']);
    },
  );

  it('skips and counts a damaged journal line, and reads on past it', async () => {
    const book = new TaskBook(dir, log);
    await book.load(NOW, DROP_MS);
    const registry = await readJsonFile(registryPath(dir), registrySchema);
    const journal = new JournalReader(dir);
    await journal.read(registry?.tasksGeneration ?? null);
    appendFileSync(journalPath(dir, registry?.tasksGeneration ?? 0), 'not json\n["t1",{"status":"nope"}]\n');
    book.record('t2', { status: 'running' });
    await book.flush([]);
    const got = await journal.read(registry?.tasksGeneration ?? null);
    expect(got.damaged).toBe(2);
    expect(Object.keys(got.tasks)).toEqual(['t2']);
  });
});
