import fc from 'fast-check';
import { withIntakeWait } from '../../../../lib/core/fleet/intake-wait';
import type { Decision } from '../../../../lib/core/fleet/watchdog';
import { emptyWatchdogState, seededState } from '../../../../lib/core/fleet/watchdog-state';
import type { Leader } from '../../../../lib/core/schemas';

const leader: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 4,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;
const idle = (state = emptyWatchdogState()): Decision => ({ state, actions: [], changed: false });
const alerts = (d: Decision) => d.actions.flatMap((a) => (a.kind === 'publish' ? [a.event] : []));

describe('withIntakeWait', () => {
  it(
    'alerts once when every read for the whole threshold found ' +
      'input waiting, and again only after a read found none',
    () => {
      let d = withIntakeWait(idle(), 3, leader, T0, HOUR);
      expect(alerts(d)).toEqual([]);
      expect(d.state.intakeWait).toEqual({ since: T0, alerts: 0, alerted: false });
      // Still waiting, not yet an hour: nothing to store.
      expect(withIntakeWait(idle(d.state), 9, leader, T0 + HOUR - 1, HOUR).changed).toBe(false);
      d = withIntakeWait(idle(d.state), 9, leader, T0 + HOUR, HOUR);
      expect(alerts(d).map((e) => [e.kind, e.id])).toEqual([['INPUT_WAITING', 'input-wait-1.INPUT_WAITING']]);
      expect(alerts(d)[0]?.summary).toMatch(/^Input has waited in the intake queue for 60 min/);
      expect(alerts(withIntakeWait(idle(d.state), 9, leader, T0 + 5 * HOUR, HOUR))).toEqual([]);
      d = withIntakeWait(idle(d.state), 0, leader, T0 + 5 * HOUR, HOUR);
      expect(d.state.intakeWait).toEqual({ since: null, alerts: 1, alerted: false });
      d = withIntakeWait(idle(d.state), 1, leader, T0 + 6 * HOUR, HOUR);
      expect(alerts(withIntakeWait(idle(d.state), 1, leader, T0 + 7 * HOUR, HOUR)).map((e) => e.id)).toEqual([
        'input-wait-2.INPUT_WAITING',
      ]);
    },
  );

  it('does nothing on a run that read no queue, nor while the queue stays empty', () => {
    expect(withIntakeWait(idle(), null, leader, T0, HOUR)).toEqual(idle());
    expect(withIntakeWait(idle(), undefined, leader, T0, HOUR)).toEqual(idle());
    expect(withIntakeWait(idle(), 0, leader, T0, HOUR)).toEqual(idle());
  });

  it(
    'alerts each spell of non-empty reads that lasted the threshold exactly once, ' +
      'under ids never used before, also across a rebuilt state (property)',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ depth: fc.constantFrom(0, 0, 1, 5), gapMs: fc.integer({ min: 1, max: 30 * 60_000 }) }), {
            maxLength: 60,
          }),
          fc.integer({ min: 0, max: 59 }),
          (reads, rebuildAt) => {
            let state = emptyWatchdogState();
            const ids: string[] = [];
            let expected = 0;
            let since: number | null = null;
            let alerted = false;
            let now = T0;
            reads.forEach(({ depth, gapMs }, i) => {
              now += gapMs;
              if (i === rebuildAt) {
                // A rebuilt state forgets the spell (it starts again at the next read) but not the ids.
                state = seededState(ids.map((id) => id.replace('.INPUT_WAITING', '')));
                since = null;
                alerted = false;
              }
              if (depth === 0) {
                since = null;
                alerted = false;
              } else if (since === null) since = now;
              else if (!alerted && now - since >= HOUR) {
                alerted = true;
                expected++;
              }
              const out = withIntakeWait(idle(state), depth, leader, now, HOUR);
              ids.push(...alerts(out).map((e) => e.id));
              state = out.state;
            });
            return ids.length === expected && new Set(ids).size === ids.length;
          },
        ),
      );
    },
  );
});
