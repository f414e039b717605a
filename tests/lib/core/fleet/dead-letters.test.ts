import fc from 'fast-check';
import { RISE_WATCHES, withDeadLetters, withRise, type RiseWatch } from '../../../../lib/core/fleet/dead-letters';
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
const idle = (state = emptyWatchdogState()): Decision => ({ state, actions: [], changed: false });
const alerts = (d: Decision) => d.actions.flatMap((a) => (a.kind === 'publish' ? [a.event] : []));

describe('withDeadLetters', () => {
  it('alerts each rise of the dead-letter queue once, with how many arrived, and only notes a fall', () => {
    const first = withDeadLetters(idle(), 2, leader, T0);
    expect(alerts(first).map((e) => [e.kind, e.id])).toEqual([['DEAD_LETTERED', 'dead-letter-1.DEAD_LETTERED']]);
    expect(alerts(first)[0]?.summary).toMatch(/^2 new message\(s\) in the dead-letter queue \(2 in all\)/);
    expect(first.state.deadLetters).toEqual({ seen: 2, alerts: 1 });
    expect(withDeadLetters(idle(first.state), 2, leader, T0 + 1).changed).toBe(false);
    const fell = withDeadLetters(idle(first.state), 0, leader, T0 + 2);
    expect(alerts(fell)).toEqual([]);
    expect(fell.state.deadLetters).toEqual({ seen: 0, alerts: 1 });
    expect(alerts(withDeadLetters(idle(fell.state), 1, leader, T0 + 3)).map((e) => e.id)).toEqual([
      'dead-letter-2.DEAD_LETTERED',
    ]);
  });

  it('does nothing on a run that read no queue', () => {
    expect(withDeadLetters(idle(), null, leader, T0)).toEqual(idle());
    expect(withDeadLetters(idle(), undefined, leader, T0)).toEqual(idle());
  });

  it("watches the notifier's failure queue the same way, under ids and a kind of its own", () => {
    const dead = withDeadLetters(idle(), 1, leader, T0);
    const both = withRise('notifierFailures', dead, 3, leader, T0);
    expect(alerts(both).map((e) => [e.kind, e.id])).toEqual([
      ['DEAD_LETTERED', 'dead-letter-1.DEAD_LETTERED'],
      ['NOTIFIER_FAILED', 'notifier-failure-1.NOTIFIER_FAILED'],
    ]);
    expect(both.state).toMatchObject({ deadLetters: { seen: 1, alerts: 1 }, notifierFailures: { seen: 3, alerts: 1 } });
    expect(alerts(both)[1]?.summary).toMatch(/^3 alert\(s\) Slack did not take/);
  });

  it.each(Object.keys(RISE_WATCHES) as RiseWatch[])(
    '%s: alerts exactly the rises of any series of depths, ' +
      'each under an id never used before, also across a rebuilt state (property)',
    (which) => {
      const kind = RISE_WATCHES[which].kind;
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 40 }),
          fc.integer({ min: 0, max: 39 }),
          (depths, rebuildAt) => {
            let state = emptyWatchdogState();
            const ids: string[] = [];
            let rises = 0;
            let last = 0;
            depths.forEach((depth, i) => {
              // A rebuilt state starts from the ids written so far (seededState), not from zero.
              if (i === rebuildAt) {
                state = seededState(ids.map((id) => id.replace(`.${kind}`, '')));
                last = 0;
              }
              const out = withRise(which, idle(state), depth, leader, T0 + i);
              if (depth > last) rises++;
              last = depth;
              ids.push(...alerts(out).map((e) => e.id));
              expect(alerts(out).every((e) => e.kind === kind)).toBe(true);
              state = out.state;
            });
            return ids.length === rises && new Set(ids).size === ids.length;
          },
        ),
      );
    },
  );
});
