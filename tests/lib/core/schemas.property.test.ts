import fc from 'fast-check';
import type { z } from 'zod';
import { fleetEventSchema, type FleetEvent } from '../../../lib/core/events';
import {
  checkpointSchema,
  doneSchema,
  heartbeatSchema,
  leaderSchema,
  nodeNameSchema,
  stageOutputSchema,
  taskIdSchema,
  taskMessageSchema,
} from '../../../lib/core/schemas';
import { parseJsonText, parseWith } from '../../../lib/core/validate';
import { heartbeat, sample } from '../../helpers/fixtures';
import {
  expectNoPollution,
  hostileJsonTextArb,
  hostileStringArb,
  mutationArb,
  outcomeOf,
  pointsAt,
  POLLUTERS,
  PROTOTYPE_KEYS,
  RUNS,
} from '../../helpers/hostile';
import { stalledEvent } from '../../helpers/fixtures';

/**
 * Hostile input: every S3 object kind and the task message, read as the state store reads
 * them (JSON text, then the schema), over hostile bodies. Each read is a clean parse or a
 * ValidationError naming the field; nothing pollutes a prototype; what parses can be written
 * back and read again.
 */
const EVENT: FleetEvent = {
  ...stalledEvent,
  commandId: 'cmd-1',
  newPrimary: 'node-2',
  newEpoch: 4,
};

const HEARTBEAT = {
  ...heartbeat('node-1', [
    sample(1, {
      inFlight: [{ taskId: 'task-0001', progress: 3, stage: 'transcode', stageCpuMs: 10 }],
      mayConsume: true,
      worker: '123:456',
    }),
  ]),
  instanceId: 'mi-00000000000000001',
  held: [
    {
      taskId: 'task-0001',
      receipt: 'receipt-1',
      id: 'msg-1',
      receiveCount: 1,
      body: '{"taskId":"task-0001","workSeconds":1}',
    },
  ],
};

/** One valid instance of each kind, with every optional field present so mutations reach them all. */
const KINDS: [string, z.ZodType, unknown, 'strict' | 'stored' | 'kept'][] = [
  [
    'leader.json',
    leaderSchema,
    {
      version: 1,
      primary: 'node-1',
      epoch: 3,
      renewals: 5,
      reason: 'renewal',
      changedBy: 'node-1',
      previous: 'node-2',
      handover: 'await-fence',
      replaces: { epoch: 2, renewals: 9 },
    },
    'stored',
  ],
  ['heartbeat.json', heartbeatSchema, HEARTBEAT, 'stored'],
  [
    'done.json',
    doneSchema,
    { version: 1, taskId: 'task-0001', node: 'node-1', epoch: 3, finishedAt: 1_700_000_000_000 },
    'stored',
  ],
  [
    'checkpoint.json',
    checkpointSchema,
    {
      version: 1,
      taskId: 'task-0001',
      stages: 2,
      epoch: 3,
      node: 'node-1',
      outputs: { transcode: 'outputs/task-0001/transcode.json' },
      resumedFrom: 1,
    },
    'stored',
  ],
  ['events/…/KIND.json', fleetEventSchema, EVENT, 'stored'],
  [
    'outputs/…/stage.json',
    stageOutputSchema,
    { taskId: 'task-0001', stage: 'transcode', node: 'node-1', epoch: 3 },
    'strict',
  ],
  [
    'task message',
    taskMessageSchema,
    { taskId: 'task-0001', episode: 'ep-1', workSeconds: 30, payload: { source: 's3://media/ep-1.mov' } },
    'kept',
  ],
];

/** The store's read of one body: JSON text, then the schema. */
const read = (schema: z.ZodType, text: string): unknown => parseWith(schema, parseJsonText(text, 'k'), 'k');

describe('stored records and the task message, over hostile bodies', () => {
  afterEach(expectNoPollution);

  it('reads any JSON text as each kind, or refuses it naming the field', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS.keys()), hostileJsonTextArb, (kind, text) => {
        outcomeOf(() => read(KINDS[kind]?.[1] ?? leaderSchema, text));
        expectNoPollution();
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it.each(KINDS)(
    'names the changed field when one change makes %s invalid, and reads back what it accepts',
    (_kind, schema, valid) => {
      expect(schema.safeParse(valid).success).toBe(true);
      fc.assert(
        fc.property(mutationArb(valid), (m) => {
          const out = outcomeOf(() => read(schema, JSON.stringify(m.value) ?? 'null'));
          expectNoPollution();
          if (!out.ok) {
            expect({
              field: out.error.field,
              changed: m.path,
              pointsAt: pointsAt(out.error.field, m.path),
            }).toMatchObject({ pointsAt: true });
            return;
          }
          // What the store accepts is what a CAS writes back: it must read again, unchanged.
          expect(read(schema, JSON.stringify(out.value))).toEqual(out.value);
        }),
        { numRuns: RUNS },
      );
    },
  );

  it.each(KINDS.filter(([, , , mode]) => mode === 'strict'))(
    'refuses any unknown key in %s, naming it',
    (_kind, schema, valid) => {
      for (const key of [...PROTOTYPE_KEYS, 'extra', '']) {
        const body = `${JSON.stringify(valid).slice(0, -1)},${JSON.stringify(key)}:{"polluted":true}}`;
        const out = outcomeOf(() => read(schema, body));
        // An empty key is shown quoted: a field of '' would name nothing.
        expect(out.ok ? 'parsed' : out.error.field).toBe(key === '' ? '""' : key);
      }
      expectNoPollution();
    },
  );

  it.each(KINDS.filter(([, , , mode]) => mode === 'kept'))(
    "keeps an unknown key in %s (the producer's own), with no prototype polluted",
    (_kind, schema, valid) => {
      for (const polluter of POLLUTERS) {
        const body = JSON.stringify({ ...(valid as object), ...(polluter as object), extra: { own: 1 } });
        const value = read(schema, body) as Record<string, unknown>;
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
        expect(value['extra']).toEqual({ own: 1 });
      }
      expectNoPollution();
    },
  );

  it.each(KINDS.filter(([, , , mode]) => mode === 'stored'))(
    'drops an unknown key in %s (a rolling upgrade), pollution payloads included',
    (_kind, schema, valid) => {
      for (const polluter of POLLUTERS) {
        const body = JSON.stringify({ ...(valid as object), ...(polluter as object) });
        const value = read(schema, body) as Record<string, unknown>;
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
        expect(Object.keys(value)).toEqual(Object.keys(schema.parse(valid) as object));
      }
    },
  );
});

describe('names and ids', () => {
  it.each([
    ['node name', nodeNameSchema],
    ['task id', taskIdSchema],
  ])('accepts no %s that an empty object already has a property for', (_what, schema) => {
    // Node names and task ids index records (`state.nodes[node]`, `tasks[taskId]`): one such as
    // `constructor` would read Object itself where the code expects undefined.
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom<string>(...PROTOTYPE_KEYS), hostileStringArb), (name) => {
        if (schema.safeParse(name).success)
          expect((Object.create(Object.prototype) as Record<string, unknown>)[name]).toBeUndefined();
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses `constructor` as a node name, naming the field', () => {
    const out = outcomeOf(() =>
      read(
        leaderSchema,
        JSON.stringify({ version: 1, primary: 'constructor', epoch: 1, renewals: 0, reason: 'r', changedBy: 'x' }),
      ),
    );
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.field).toBe('primary');
  });
});

describe('the pollution check every hostile case ends with', () => {
  it('notices a property added to Object.prototype', () => {
    // Without this, a check that can never fail would pass every case above.
    Object.defineProperty(Object.prototype, 'polluted', { value: true, configurable: true, writable: true });
    try {
      expect(expectNoPollution).toThrow();
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    expectNoPollution();
  });
});
