import fc from 'fast-check';
import { classify, leaseStale, observeLease, staleAfterMs, takenOverFrom } from '../../../../lib/core/fleet/liveness';
import type { Leader } from '../../../../lib/core/schemas';

const T0 = 1_800_000_000_000;
const leader: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 3,
  renewals: 0,
  reason: 't',
  changedBy: 'node-1',
  previous: 'node-2',
  handover: 'immediate',
};
const STALE = staleAfterMs({ leaseExpirySeconds: 30, watchdogScheduleSeconds: 60 });

describe('liveness of the primary, by its lease', () => {
  it('alerts a lease left unchanged for its expiry and a schedule period, by the watchdog clock', () => {
    expect(STALE).toBe(90_000);
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 1, max: 60_000 }), renewed: fc.boolean() }), { maxLength: 30 }),
        (runs) => {
          let seen = observeLease(undefined, leader, T0);
          let renewals = 0;
          let renewedAt = T0;
          let now = T0;
          for (const run of runs) {
            now += run.gap;
            if (run.renewed) {
              renewals += 1;
              renewedAt = now;
            }
            seen = observeLease(seen, { ...leader, renewals }, now);
            expect(leaseStale(seen, now, STALE)).toBe(now - renewedAt >= STALE);
          }
        },
      ),
    );
  });

  it('takes a standby taking the lease itself as the verdict on the node that held it', () => {
    const before = observeLease(undefined, { ...leader, primary: 'node-2', epoch: 2, changedBy: 'watchdog' }, T0);
    expect(takenOverFrom(before, leader)).toBe('node-2');
    // The watchdog's own failover, a person's, or the same epoch: no verdict.
    expect(takenOverFrom(before, { ...leader, changedBy: 'watchdog' })).toBeNull();
    expect(takenOverFrom(before, { ...leader, changedBy: 'operator' })).toBeNull();
    expect(takenOverFrom(before, { ...leader, epoch: 2 })).toBeNull();
    expect(takenOverFrom(undefined, leader)).toBeNull();
  });

  it('calls a node dead only when Lightsail says stopped or SSM lost its agent', () => {
    expect(classify(undefined)).toBe('silent');
    expect(classify({ instance: 'running', ssm: 'online' })).toBe('silent');
    expect(classify({ instance: 'stopped', ssm: 'online' })).toBe('dead');
    expect(classify({ instance: 'running', ssm: 'lost' })).toBe('dead');
  });
});
