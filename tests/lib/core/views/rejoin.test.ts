import type { Heartbeat, Leader } from '../../../../lib/core/schemas';
import { planRejoin, rejoinedSince } from '../../../../lib/core/views/rejoin';
import { heartbeat, NODES, sample } from '../../../helpers/fixtures';

const leader: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 4,
  renewals: 9,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const ok = <T>(value: T) => ({ state: 'ok' as const, value });
const standby = (over: Parameters<typeof sample>[1], role: Heartbeat['role'] = 'standby'): Heartbeat => ({
  ...heartbeat('node-2', [sample(7, { consumingEpoch: null, epochSeen: 4, ...over })]),
  role,
});
const plan = (hb: Heartbeat | null, node = 'node-2') =>
  planRejoin({ node, nodes: NODES, leader: ok(leader), heartbeat: hb === null ? undefined : ok(hb), sampleMs: 15_000 });

describe('planRejoin', () => {
  it('goes for a standby, saying what keeps it from being ready', () => {
    expect(plan(standby({ workerProcesses: 0 }))).toEqual({ kind: 'go', fault: 'no-worker', boot: 'boot-1', seq: 7 });
    expect(plan(standby({ proofAgeMs: 600_000 }))).toMatchObject({ kind: 'go', fault: 'unproven' });
    expect(plan(standby({}))).toMatchObject({ kind: 'go', fault: null });
  });

  it(
    'refuses the primary, a node whose agent still holds a lease, ' +
      'and one without a heartbeat; names a node not configured',
    () => {
      expect(plan(standby({}), 'node-1')).toMatchObject({
        kind: 'refuse',
        message: expect.stringContaining('node-1 is the primary of epoch 4'),
      });
      expect(plan(standby({ mayConsume: true }, 'fenced'))).toMatchObject({
        kind: 'refuse',
        message: expect.stringContaining('still holds a lease'),
      });
      expect(plan(standby({}, 'primary'))).toMatchObject({ kind: 'refuse' });
      expect(plan(null)).toMatchObject({ kind: 'refuse', message: expect.stringContaining('no readable heartbeat') });
      expect(plan(standby({}), 'node-7')).toMatchObject({ kind: 'unknown-node' });
    },
  );
});

describe('rejoinedSince', () => {
  const since = { boot: 'boot-1', seq: 7, elapsedMs: 20_000 };
  it('wants a later sample with a live worker whose self-test is younger than the restart', () => {
    expect(rejoinedSince(standby({ proofAgeMs: 5_000 }), since, 15_000)).toBe(false); // seq 7: not after the restart
    const later = (over: Parameters<typeof sample>[1], boot = 'boot-1'): Heartbeat => ({
      ...standby({}),
      boot,
      samples: [sample(8, { consumingEpoch: null, epochSeen: 4, ...over })],
    });
    expect(rejoinedSince(later({ proofAgeMs: 5_000 }), since, 15_000)).toBe(true);
    expect(rejoinedSince(later({ proofAgeMs: 30_000 }), since, 15_000)).toBe(false); // proven before the restart
    expect(rejoinedSince(later({ workerProcesses: 0, proofAgeMs: 5_000 }), since, 15_000)).toBe(false);
    expect(rejoinedSince(later({ proofAgeMs: 5_000 }, 'boot-2'), { ...since, seq: 99 }, 15_000)).toBe(true);
    expect(rejoinedSince(null, since, 15_000)).toBe(false);
  });
});
