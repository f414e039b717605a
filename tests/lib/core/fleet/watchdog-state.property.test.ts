import fc from 'fast-check';
import { admissionSchema, withMode, ADMISSION_MODES } from '../../../../lib/core/fleet/admission';
import { seededState, watchdogStateSchema } from '../../../../lib/core/fleet/watchdog-state';
import { parseJsonText, parseWith } from '../../../../lib/core/validate';
import { sample } from '../../../helpers/fixtures';
import {
  expectNoPollution,
  hostileJsonTextArb,
  hostileStringArb,
  mutationArb,
  outcomeOf,
  pointsAt,
  PROTOTYPE_KEYS,
  RUNS,
} from '../../../helpers/hostile';

/**
 * Hostile input: `watchdog/state.json` (both versions, and the operator's admission override
 * it carries) over hostile bodies, and the state rebuilt from a hostile listing of events/.
 */
const read = (text: string): unknown =>
  parseWith(watchdogStateSchema, parseJsonText(text, 'watchdog/state.json'), 'watchdog/state.json');

const COUNTER = {
  boot: 'boot-1',
  lastSeq: 4,
  last: sample(4, { inFlight: [{ taskId: 'task-0001', progress: 3 }] }),
  failing: 2,
  healthy: 0,
  lastFault: 'no-progress',
};

const V2 = {
  version: 2,
  revision: 7,
  lastFailoverAt: 1_700_000_000_000,
  judgedAt: 1_700_000_060_000,
  origin: { primary: 'node-1', epoch: 3 },
  admission: { mode: 'hold', held: true, since: 1_700_000_000_000, reason: 'held by an operator', changes: 2 },
  nodes: {
    'node-1': {
      counter: COUNTER,
      incident: {
        id: 'node-1-e3-i2',
        kind: 'stall',
        openedAt: 100,
        epoch: 3,
        stage: {
          name: 'failover-failed',
          failover: { to: 'node-2', fromEpoch: 3, claimedAt: 130, outgoingStopped: false, stopOutgoing: true },
          detail: 'superseded',
          finishedAt: 140,
        },
        restart: {
          command: 'restartWorker',
          claimedAt: 110,
          commandId: 'cmd-1',
          sentAt: 111,
          finishedAt: 120,
          detail: 'x',
          worker: '1:2',
          failed: true,
        },
      },
      restartTimes: [110],
      rejoinTimes: [120],
      incidents: 2,
      newest: { boot: 'boot-1', seq: 4, changedAt: 1_700_000_000_000 },
    },
  },
};

const V1 = {
  version: 1,
  revision: 9,
  lastFailoverAt: 50,
  origin: { primary: 'node-1', epoch: 3 },
  nodes: {
    'node-1': {
      counter: COUNTER,
      incident: {
        id: 'node-1-e3-i2',
        kind: 'stall',
        openedAt: 100,
        epoch: 3,
        restart: {
          command: 'restartWorker',
          status: 'failed',
          claimedAt: 110,
          commandId: 'cmd-1',
          sentAt: 111,
          finishedAt: 120,
          detail: 'x',
        },
        escalated: false,
        failover: {
          status: 'failed',
          to: 'node-2',
          fromEpoch: 3,
          claimedAt: 130,
          outgoingStopped: false,
          stopOutgoing: true,
          finishedAt: 140,
          detail: 'superseded',
        },
        noStandbyAlerted: true,
        confirmed: true,
      },
      restartTimes: [110],
      incidents: 2,
      seen: { boot: 'boot-1', seq: 4, at: 50 },
    },
  },
};

describe('watchdog/state.json, over hostile bodies', () => {
  afterEach(expectNoPollution);

  it('reads any JSON text, or refuses it naming the field', () => {
    fc.assert(
      fc.property(hostileJsonTextArb, (text) => {
        outcomeOf(() => read(text));
        expectNoPollution();
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['version 2', V2],
    ['version 1', V1],
  ])(
    'names the changed field when one change makes a %s state invalid, and reads back what it accepts',
    (_version, valid) => {
      expect(watchdogStateSchema.safeParse(valid).success).toBe(true);
      fc.assert(
        fc.property(mutationArb(valid), (m) => {
          const out = outcomeOf(() => read(JSON.stringify(m.value) ?? 'null'));
          expectNoPollution();
          if (!out.ok) {
            expect({
              field: out.error.field,
              changed: m.path,
              pointsAt: pointsAt(out.error.field, m.path),
            }).toMatchObject({ pointsAt: true });
            return;
          }
          // The next CAS writes the state back as version 2: that must read again, unchanged.
          expect(read(JSON.stringify(out.value))).toEqual(out.value);
        }),
        { numRuns: RUNS },
      );
    },
  );

  it('names the field of a damaged incident deep in a version-2 state, not the whole object', () => {
    const damaged = { ...V2, nodes: { 'node-1': { ...V2.nodes['node-1'], incidents: 'two' } } };
    const out = outcomeOf(() => read(JSON.stringify(damaged)));
    expect(out.ok ? 'parsed' : out.error.field).toBe('nodes.node-1.incidents');
  });

  it('reads any operator override, and sets a mode on whatever it read', () => {
    fc.assert(
      fc.property(mutationArb(V2.admission), fc.constantFrom(...ADMISSION_MODES), (m, mode) => {
        const out = outcomeOf(() => parseWith(admissionSchema, m.value, 'admission'));
        if (!out.ok) return;
        const next = withMode(out.value, mode);
        expect(next === null ? out.value.mode : next.mode).toBe(mode);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('seededState over a hostile listing of events/', () => {
  afterEach(expectNoPollution);

  it('rebuilds a state that reads back, whatever the incident ids are', () => {
    // The ids come from keys anyone able to write events/ can choose; the rebuilt state is written by CAS.
    const idArb = fc.oneof(
      fc
        .tuple(
          fc.oneof(fc.constantFrom<string>(...PROTOTYPE_KEYS), hostileStringArb),
          fc.nat(),
          fc.integer({ min: -5, max: 2 ** 40 }),
        )
        .map(([node, e, i]) => `${node}-e${e}-i${i}`),
      fc.nat().map((n) => `admission-${n}`),
      // Counters past the safe integers: a state holding one would not read back.
      fc.constantFrom('node-1-e1-i99999999999999999999', 'admission-99999999999999999999'),
      hostileStringArb,
    );
    fc.assert(
      fc.property(fc.array(idArb, { maxLength: 6 }), (ids) => {
        const state = seededState(ids);
        expect(Object.getPrototypeOf(state.nodes)).toBe(Object.prototype);
        expect(watchdogStateSchema.safeParse(JSON.parse(JSON.stringify(state))).success).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
