import fc from 'fast-check';
import {
  ADMIT_PER_RUN,
  decideAdmission,
  emptyAdmission,
  failoverUnderWay,
  type Admission,
  type AdmissionInput,
} from '../../../../lib/core/fleet/admission';
import { fleetEventSchema } from '../../../../lib/core/events';
import { emptyWatch } from '../../../../lib/core/fleet/watchdog-state';
import type { Leader } from '../../../../lib/core/schemas';

const leader: Leader = {
  version: 1,
  primary: 'node-2',
  epoch: 3,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const MARKS = { admissionHighMark: 20, admissionLowMark: 5, sampleIntervalSeconds: 1 };

const input = fc.record<AdmissionInput>({
  depths: fc.option(fc.record({ backlog: fc.nat(60), intake: fc.nat(300) }), { nil: null }),
  readyStandbys: fc.nat(2),
  failingOver: fc.boolean(),
});

/** Runs a sequence of rounds from open input, returning each round's state and decision. */
const run = (inputs: AdmissionInput[], mode: Admission['mode'] = 'auto') => {
  let state: Admission = { ...emptyAdmission(), mode };
  return inputs.map((x, i) => {
    const before = state;
    const out = decideAdmission(state, x, MARKS, 1_000 * i, leader);
    state = out.admission;
    return { before, input: x, out };
  });
};

describe('admission (backpressure)', () => {
  it(
    'never fills the task queue above the high mark, never admits while ' +
      'held or without having read the queues, and never more than waits',
    () => {
      fc.assert(
        fc.property(fc.array(input, { maxLength: 40 }), (inputs) => {
          for (const { input: x, out } of run(inputs)) {
            expect(out.admit).toBeGreaterThanOrEqual(0);
            if (out.admission.held || x.depths === null) expect(out.admit).toBe(0);
            if (x.depths !== null) {
              expect(x.depths.backlog + out.admit).toBeLessThanOrEqual(
                Math.max(x.depths.backlog, MARKS.admissionHighMark),
              );
              expect(out.admit).toBeLessThanOrEqual(Math.min(x.depths.intake, ADMIT_PER_RUN));
            }
          }
        }),
      );
    },
  );

  it(
    'admits once from one reading however many runs decide at once: the one whose verdict is stored claims it, ' +
      'and the others, deciding again on it, admit nothing within a sample interval (property)',
    () => {
      fc.assert(
        fc.property(
          fc.record({ backlog: fc.nat(19), intake: fc.integer({ min: 1, max: 300 }) }),
          fc.integer({ min: 2, max: 5 }),
          fc.nat(999),
          (depths, runs, later) => {
            const x: AdmissionInput = { depths, readyStandbys: 1, failingOver: false };
            // Every run reads the same depths (the first admission is not carried out before the others decide).
            let stored = emptyAdmission();
            let admitted = 0;
            for (let i = 0; i < runs; i++) {
              const out = decideAdmission(stored, x, MARKS, 10_000 + later * (i > 0 ? 1 : 0), leader);
              admitted += out.admit;
              stored = out.admission;
            }
            return (
              admitted === Math.min(depths.intake, MARKS.admissionHighMark - depths.backlog) &&
              stored.admittedAt === 10_000
            );
          },
        ),
      );
    },
  );

  it(
    'holds during a failover, holds with no ready standby at the high mark, ' +
      'and resumes only at the low mark with no failover (hysteresis: no flapping between the marks)',
    () => {
      fc.assert(
        fc.property(fc.array(input, { maxLength: 40 }), (inputs) => {
          for (const { before, input: x, out } of run(inputs)) {
            if (x.failingOver) expect(out.admission.held).toBe(true);
            if (x.depths !== null && x.readyStandbys === 0 && x.depths.backlog >= MARKS.admissionHighMark)
              expect(out.admission.held).toBe(true);
            // Open → held only for a failover or at the high mark with no standby ready.
            if (!before.held && out.admission.held)
              expect(
                x.failingOver ||
                  (x.depths !== null && x.readyStandbys === 0 && x.depths.backlog >= MARKS.admissionHighMark),
              ).toBe(true);
            // Held → open only with the queues read, the backlog at the low mark, and no failover.
            if (before.held && !out.admission.held) {
              expect(x.failingOver).toBe(false);
              expect(x.depths).not.toBeNull();
              expect(x.depths?.backlog ?? Infinity).toBeLessThanOrEqual(MARKS.admissionLowMark);
            }
          }
        }),
      );
    },
  );

  it('alerts each transition once, INPUT_HELD then INPUT_RESUMED alternately, under ids that never repeat', () => {
    fc.assert(
      fc.property(fc.array(input, { maxLength: 60 }), (inputs) => {
        const rounds = run(inputs);
        const events = rounds.flatMap((r) => (r.out.event === null ? [] : [r.out.event]));
        expect(events.length).toBe(rounds.filter((r) => r.before.held !== r.out.admission.held).length);
        events.forEach((e, i) => {
          expect(fleetEventSchema.parse(e)).toEqual(e);
          expect(e.kind).toBe(i % 2 === 0 ? 'INPUT_HELD' : 'INPUT_RESUMED');
          expect(e.node).toBe('node-2');
        });
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      }),
    );
  });

  it("obeys an operator's override whatever the fleet looks like", () => {
    fc.assert(
      fc.property(fc.array(input, { minLength: 1, maxLength: 20 }), (inputs) => {
        expect(run(inputs, 'hold').every((r) => r.out.admission.held && r.out.admit === 0)).toBe(true);
        expect(run(inputs, 'open').every((r) => !r.out.admission.held)).toBe(true);
      }),
    );
  });

  it('takes a silent primary for a failover on its way, a silent standby not', () => {
    const silent = {
      ...emptyWatch(),
      incident: {
        id: 'node-1-i1',
        kind: 'dead' as const,
        openedAt: 0,
        epoch: 3,
        stage: { name: 'silent' as const },
        restart: null,
      },
    };
    expect(failoverUnderWay({ 'node-2': silent }, leader)).toBe(true);
    expect(failoverUnderWay({ 'node-1': silent }, leader)).toBe(false);
    expect(failoverUnderWay({ 'node-1': emptyWatch() }, leader)).toBe(false);
  });
});
