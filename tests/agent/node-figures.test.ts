import fc from 'fast-check';
import { NodeFigures } from '../../agent/node-figures';
import { bootId } from '../../agent/runtime/boot';

const WINDOW_MS = 300_000;
const role = (r: 'primary' | 'standby', validUntil: number) => ({ role: r, epoch: 2, validUntil, boot: bootId() });

describe('NodeFigures', () => {
  it('counts the CAS races lost within the window, however they came (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ after: fc.integer({ min: 0, max: 200_000 }), races: fc.integer({ min: 0, max: 3 }) }), {
          maxLength: 40,
        }),
        (steps) => {
          let now = 1_000_000;
          const figures = new NodeFigures(WINDOW_MS, () => now);
          const at: number[] = [];
          for (const s of steps) {
            now += s.after;
            for (let i = 0; i < s.races; i++) {
              figures.raced();
              at.push(now);
            }
            expect(figures.of(role('standby', 0)).casConflicts).toBe(at.filter((t) => t > now - WINDOW_MS).length);
          }
        },
      ),
    );
  });

  it(
    'gives the last peer-sync round once there is one, ' + 'and the lease left only on the primary, 0 once it lapsed',
    () => {
      let now = 50_000;
      const figures = new NodeFigures(WINDOW_MS, () => now);
      expect(figures.of(role('standby', 0))).toEqual({ casConflicts: 0 });
      figures.synced(420);
      expect(figures.of(role('primary', now + 27_000))).toEqual({ syncMs: 420, casConflicts: 0, leaseLeftMs: 27_000 });
      now += 30_000;
      // Lapsed: 0, the primary is fencing itself; a standby never gives one.
      expect(figures.of(role('primary', now - 3_000))).toEqual({ syncMs: 420, casConflicts: 0, leaseLeftMs: 0 });
      expect(figures.of(role('standby', now + 27_000))).toEqual({ syncMs: 420, casConflicts: 0 });
    },
  );
});
