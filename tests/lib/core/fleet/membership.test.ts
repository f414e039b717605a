import fc from 'fast-check';
import { isLost, lostAfterMs, newestSample, observe, restartClocks } from '../../../../lib/core/fleet/membership';
import { emptyWatch, type NodeWatch } from '../../../../lib/core/fleet/watchdog-state';
import { heartbeat, working } from '../../../helpers/fixtures';

const T0 = 1_800_000_000_000;
const LOST = lostAfterMs({ sampleIntervalSeconds: 15, watchdogScheduleSeconds: 60 });

describe('membership', () => {
  it('loses a node after 2 × max(sample interval, schedule period)', () => {
    expect(LOST).toBe(120_000);
    expect(lostAfterMs({ sampleIntervalSeconds: 90, watchdogScheduleSeconds: 60 })).toBe(180_000);
  });

  it('takes the newest sample of the heartbeat or the beat; the beat when its boot differs', () => {
    const hb = heartbeat('node-2', working(0, 5));
    expect(newestSample(hb, undefined)).toEqual({ boot: hb.boot, seq: 4 });
    expect(newestSample(hb, { boot: hb.boot, seq: 9 })).toEqual({ boot: hb.boot, seq: 9 });
    expect(newestSample(hb, { boot: hb.boot, seq: 2 })).toEqual({ boot: hb.boot, seq: 4 });
    expect(newestSample(hb, { boot: 'other', seq: 1 })).toEqual({ boot: 'other', seq: 1 });
    expect(newestSample(undefined, undefined)).toBeNull();
  });

  it('judges a node lost exactly when its newest sample stayed unchanged for the loss window', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 1, max: 200_000 }), changed: fc.boolean() }), { maxLength: 30 }),
        (runs) => {
          let watch: NodeWatch = observe(emptyWatch(), { boot: 'b', seq: 0 }, T0);
          let now = T0;
          let seq = 0;
          let changedAt = T0;
          for (const run of runs) {
            now += run.gap;
            if (run.changed) {
              seq += 1;
              changedAt = now;
            }
            watch = observe(watch, { boot: 'b', seq }, now);
            expect(isLost(watch, now, LOST)).toBe(now - changedAt >= LOST);
          }
        },
      ),
    );
  });

  it('counts a new boot as a change, and never a node never heard from as lost', () => {
    const first = observe(emptyWatch(), { boot: 'a', seq: 7 }, T0);
    expect(observe(first, { boot: 'b', seq: 7 }, T0 + 200_000).newest?.changedAt).toBe(T0 + 200_000);
    expect(isLost(emptyWatch(), T0 + 10 * LOST, LOST)).toBe(false);
  });

  it('restarts every clock after a blind spell, but keeps a node already judged lost lost', () => {
    const quiet = observe(emptyWatch(), { boot: 'a', seq: 1 }, T0);
    const judged: NodeWatch = {
      ...quiet,
      incident: { id: 'n-e1-i1', kind: 'standby', openedAt: T0, epoch: 1, stage: { name: 'watching' }, restart: null },
    };
    const after = restartClocks({ quiet, judged }, T0 + 500_000);
    expect(isLost(after.quiet, T0 + 500_000, LOST)).toBe(false);
    expect(isLost(after.judged, T0 + 500_000, LOST)).toBe(true);
  });
});
