import fc from 'fast-check';
import {
  bucketOf,
  bucketsToSync,
  hashTasks,
  mergeEntry,
  mergeTasks,
  partition,
  TASK_STATUSES,
  type TaskEntry,
  type TaskMap,
} from '../../../../lib/core/sync/manifest';

const completion = fc.record({
  node: fc.constantFrom('node-1', 'node-2', 'node-3'),
  epoch: fc.integer({ min: 1, max: 4 }),
  at: fc.integer({ min: 0, max: 10 }),
});
const entry: fc.Arbitrary<TaskEntry> = fc
  .record({
    status: fc.constantFrom(...TASK_STATUSES),
    stages: fc.integer({ min: 0, max: 4 }),
    progress: fc.integer({ min: 0, max: 100 }),
    epoch: fc.integer({ min: 0, max: 4 }),
    done: fc.option(completion, { nil: null }),
  })
  .map((e) => (e.done !== null ? { ...e, status: 'done' as const } : e));
const taskMap: fc.Arbitrary<TaskMap> = fc.dictionary(fc.constantFrom('t1', 't2', 't3', 't4', 't5'), entry, {
  maxKeys: 5,
});

describe('manifest merge', () => {
  it('is commutative, associative and idempotent (property)', () => {
    fc.assert(
      fc.property(taskMap, taskMap, taskMap, (a, b, c) => {
        expect(mergeTasks(a, b)).toEqual(mergeTasks(b, a));
        expect(mergeTasks(mergeTasks(a, b), c)).toEqual(mergeTasks(a, mergeTasks(b, c)));
        expect(mergeTasks(a, a)).toEqual(a);
      }),
      { numRuns: 500 },
    );
  });

  it('converges to one manifest whatever the order of deltas from 3 nodes (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), taskMap), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        (deltas, order) => {
          const inOrder = deltas.reduce<TaskMap>((m, [, d]) => mergeTasks(m, d), {});
          const shuffled = [...deltas].sort(
            (x, y) => (order[deltas.indexOf(x)] ?? 0) - (order[deltas.indexOf(y)] ?? 0),
          );
          const otherOrder = shuffled.reduce<TaskMap>((m, [, d]) => mergeTasks(m, d), {});
          expect(hashTasks(otherOrder)).toBe(hashTasks(inOrder));
        },
      ),
    );
  });

  it('never moves a status backwards and keeps the maximum progress (property)', () => {
    fc.assert(
      fc.property(entry, entry, (a, b) => {
        const m = mergeEntry(a, b);
        expect(TASK_STATUSES.indexOf(m.status)).toBeGreaterThanOrEqual(
          Math.max(TASK_STATUSES.indexOf(a.status), TASK_STATUSES.indexOf(b.status)),
        );
        expect(m.progress).toBe(Math.max(a.progress, b.progress));
        expect(m.stages).toBe(Math.max(a.stages, b.stages));
      }),
    );
  });

  it('lets the first completion stand, as done.json recorded it, whatever the clocks say', () => {
    const first = {
      status: 'done' as const,
      stages: 4,
      progress: 50,
      epoch: 2,
      done: { node: 'node-2', epoch: 2, at: 9_999 },
    };
    const late = {
      status: 'done' as const,
      stages: 4,
      progress: 50,
      epoch: 3,
      done: { node: 'node-1', epoch: 3, at: 1 },
    };
    expect(mergeEntry(first, late).done).toEqual(first.done);
    expect(mergeEntry(late, first).done).toEqual(first.done);
  });
});

describe('buckets', () => {
  it('spreads ids stably and hashes independently of key order', () => {
    expect(bucketOf('task-0001')).toBe(bucketOf('task-0001'));
    const tasks = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [
        `task-${i}`,
        { status: 'queued' as const, stages: 0, progress: 0, epoch: 0, done: null },
      ]),
    );
    expect(partition(tasks).size).toBeGreaterThan(240);
    const reversed = Object.fromEntries(Object.entries(tasks).reverse());
    expect(hashTasks(reversed)).toBe(hashTasks(tasks));
  });

  it('syncs only the buckets whose hashes differ', () => {
    expect(
      bucketsToSync(
        new Map([
          [1, 'a'],
          [2, 'b'],
        ]),
        { 1: 'a', 2: 'c', 3: 'd' },
      ),
    ).toEqual([2, 3]);
    expect(bucketsToSync(new Map([[1, 'a']]), { 1: 'a' })).toEqual([]);
  });
});
