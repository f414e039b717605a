import fc from 'fast-check';
import type { z } from 'zod';
import {
  archiveDay,
  BUCKETS,
  bucketsToSync,
  manifestRootSchema,
  manifestShardSchema,
  mergeTasks,
  splitByAge,
  taskEntrySchema,
  TASK_STATUSES,
  type ManifestShard,
  type TaskEntry,
} from '../../../../lib/core/sync/manifest';
import { parseJsonText, parseWith } from '../../../../lib/core/validate';
import {
  expectNoPollution,
  hostileJsonTextArb,
  hostileKeyArb,
  hostileNumberArb,
  mutationArb,
  outcomeOf,
  pointsAt,
  PROTOTYPE_KEYS,
  RUNS,
  type Outcome,
} from '../../../helpers/hostile';

/**
 * Hostile input: the manifest root and its shards over hostile bodies, and what peer-sync does
 * with whatever they let through (merge, bucket plan, archive day): never a crash, never an entry
 * the next read would refuse.
 */
const read = <S extends z.ZodType>(schema: S, text: string): z.output<S> =>
  parseWith(schema, parseJsonText(text, 'k'), 'k');

const ROOT = {
  version: 1,
  buckets: BUCKETS,
  revision: 4,
  hashes: { '0': '0123456789abcdef', '255': 'fedcba9876543210' },
};
const ENTRY: TaskEntry = {
  status: 'done',
  stages: 4,
  progress: 9,
  epoch: 2,
  done: { node: 'node-1', epoch: 2, at: 1_700_000_000_000 },
};
const SHARD = {
  version: 1,
  bucket: 7,
  tasks: { 'task-0001': ENTRY, 'task-0002': { ...ENTRY, status: 'running', done: null } },
};

/** Valid entries, with any finite completion time a clock (or a hostile writer) could record. */
const entryArb: fc.Arbitrary<TaskEntry> = fc.record({
  status: fc.constantFrom(...TASK_STATUSES),
  stages: fc.integer({ min: 0, max: 4 }),
  progress: fc.nat(),
  epoch: fc.nat(9),
  done: fc.option(
    fc.record({ node: fc.constant('node-1'), epoch: fc.nat(9), at: hostileNumberArb.filter(Number.isFinite) }),
    { nil: null },
  ),
});

/** Task maps keyed as a hostile writer would key them, built as JSON.parse builds objects. */
const taskMapArb = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom<string>(...PROTOTYPE_KEYS), fc.constantFrom('task-1', 'task-2'), hostileKeyArb),
      entryArb,
    ),
    { maxLength: 6 },
  )
  .map((entries) => {
    const out: Record<string, TaskEntry> = {};
    for (const [k, v] of entries)
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });

describe('manifest objects, over hostile bodies', () => {
  afterEach(expectNoPollution);

  it.each([
    ['manifest.json', manifestRootSchema, ROOT],
    ['manifest/<n>.json', manifestShardSchema, SHARD],
  ] as const)('reads any JSON text as %s, or refuses it naming the field', (_kind, schema, valid) => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileJsonTextArb,
          mutationArb(valid).map((m) => JSON.stringify(m.value) ?? 'null'),
        ),
        (text) => {
          outcomeOf(() => read(schema, text));
          expectNoPollution();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['manifest.json', manifestRootSchema, ROOT],
    ['manifest/<n>.json', manifestShardSchema, SHARD],
  ] as const)('names the changed field when one change makes %s invalid', (_kind, schema, valid) => {
    fc.assert(
      fc.property(mutationArb(valid), (m) => {
        const out = outcomeOf(() => read(schema, JSON.stringify(m.value) ?? 'null'));
        if (!out.ok)
          expect({
            field: out.error.field,
            changed: m.path,
            pointsAt: pointsAt(out.error.field, m.path),
          }).toMatchObject({ pointsAt: true });
      }),
      { numRuns: RUNS },
    );
  });

  it('plans only buckets that exist, each under the one key the root spells it with', () => {
    // A root listing bucket "999" (or "007") would have peer-sync write a shard its own schema refuses.
    const keyArb = fc.oneof(fc.nat(300).map(String), fc.constantFrom('007', '00', '256', '999', '1e2', '-1'));
    fc.assert(
      fc.property(fc.dictionary(keyArb, fc.constant('0123456789abcdef'), { maxKeys: 4 }), (hashes) => {
        const out = outcomeOf(() => read(manifestRootSchema, JSON.stringify({ ...ROOT, hashes })));
        if (!out.ok) return;
        for (const key of Object.keys(out.value.hashes)) expect(String(Number(key))).toBe(key);
        for (const b of bucketsToSync(new Map(), out.value.hashes))
          expect(b >= 0 && b < BUCKETS && Number.isInteger(b)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('what peer-sync does with a shard it read', () => {
  afterEach(expectNoPollution);

  it('merges a read shard with the local tasks into entries every later read accepts', () => {
    // The node's own tasks are read too (its registry, by the same record schema), so both sides come through a parser.
    const readTasks = (tasks: Record<string, TaskEntry>): Outcome<ManifestShard> =>
      outcomeOf(() => read(manifestShardSchema, JSON.stringify({ version: 1, bucket: 0, tasks })));
    fc.assert(
      fc.property(taskMapArb, taskMapArb, (localTasks, remoteTasks) => {
        const local = readTasks(localTasks);
        const out = readTasks(remoteTasks);
        if (!out.ok || !local.ok) return;
        for (const merged of [
          mergeTasks(local.value.tasks, out.value.tasks),
          mergeTasks(out.value.tasks, local.value.tasks),
        ]) {
          for (const [id, entry] of Object.entries(merged))
            expect({ id, ok: taskEntrySchema.safeParse(entry).success }).toEqual({ id, ok: true });
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('files every completion it archives under a YYYY-MM-DD day, whatever time it records', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('task-1', 'task-2', 'task-3'), entryArb, { maxKeys: 3 }), (tasks) => {
        const out = outcomeOf(() => read(manifestShardSchema, JSON.stringify({ version: 1, bucket: 0, tasks })));
        if (!out.ok) return;
        const { old } = splitByAge(out.value.tasks, 1_700_000_000_000, 7 * 86_400_000);
        for (const entry of Object.values(old)) expect(archiveDay(entry)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }),
      { numRuns: RUNS },
    );
  });
});
