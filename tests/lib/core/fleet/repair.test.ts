import fc from 'fast-check';
import { judgeAlive } from '../../../helpers/judge';
import { damageId, highestKnownEpoch, rebuildLeader } from '../../../../lib/core/fleet/repair';
import { emptyWatchdogState, seededState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import type { Heartbeat } from '../../../../lib/core/schemas';
import { heartbeat, watchdogSettings, working } from '../../../helpers/fixtures';

const NODES3 = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 2 },
  { name: 'node-3', instanceId: 'mi-00000000000000003', priority: 3 },
];
const settings = watchdogSettings(NODES3);
const T0 = 1_800_000_000_000;

const beat = (node: string, epoch: number, role: Heartbeat['role'], proven = true): Heartbeat => ({
  ...heartbeat(
    node,
    working(0, 4).map((s) => ({
      ...s,
      epochSeen: epoch,
      consumingEpoch: role === 'primary' ? epoch : null,
      proofAgeMs: proven ? 1_000 : null,
    })),
  ),
  role,
});
const beats = (...hbs: Heartbeat[]): Map<string, Heartbeat> => new Map(hbs.map((h) => [h.node, h]));
/** The state after a round that saw these heartbeats (the repair runs on it). */
const seen = (hbs: Map<string, Heartbeat>): WatchdogState =>
  judgeAlive(emptyWatchdogState(), null, hbs, T0, settings).state;

describe('rebuildLeader', () => {
  it('restores the one node that holds the highest epoch, at that epoch', () => {
    const hbs = beats(beat('node-1', 5, 'standby'), beat('node-2', 5, 'primary'), beat('node-3', 4, 'standby'));
    expect(rebuildLeader(seen(hbs), hbs, NODES3, T0, settings)).toMatchObject({
      primary: 'node-2',
      epoch: 5,
      handover: 'immediate',
      changedBy: 'watchdog',
    });
  });

  it('promotes the best proven node at the next epoch, after a full lease, when no single node holds it', () => {
    const none = beats(beat('node-1', 5, 'fenced', false), beat('node-2', 5, 'standby'), beat('node-3', 5, 'standby'));
    expect(rebuildLeader(seen(none), none, NODES3, T0, settings)).toMatchObject({
      primary: 'node-2',
      epoch: 6,
      handover: 'await-fence',
    });
    const two = beats(beat('node-1', 5, 'primary'), beat('node-2', 5, 'primary'), beat('node-3', 5, 'standby'));
    expect(rebuildLeader(seen(two), two, NODES3, T0, settings)).toMatchObject({
      primary: 'node-1',
      epoch: 6,
      handover: 'await-fence',
    });
  });

  it('names nobody when no node is heard from with a proven worker', () => {
    const hbs = beats(beat('node-1', 5, 'standby', false));
    expect(rebuildLeader(seen(hbs), hbs, NODES3, T0, settings)).toBeNull();
    expect(rebuildLeader(emptyWatchdogState(), new Map(), NODES3, T0, settings)).toBeNull();
  });

  it('never names an epoch below one any heartbeat saw, nor a node it did not hear from (property)', () => {
    const role = fc.constantFrom<Heartbeat['role']>('primary', 'standby', 'fenced', 'pending');
    fc.assert(
      fc.property(
        fc.array(fc.record({ epoch: fc.integer({ min: 1, max: 50 }), role, proven: fc.boolean() }), {
          minLength: 1,
          maxLength: 3,
        }),
        (nodes) => {
          const hbs = beats(...nodes.map((n, i) => beat(`node-${i + 1}`, n.epoch, n.role, n.proven)));
          const leader = rebuildLeader(seen(hbs), hbs, NODES3, T0, settings);
          const top = Math.max(...nodes.map((n) => n.epoch));
          if (leader === null) return true;
          const named = nodes[Number(leader.primary.slice(5)) - 1];
          // The same epoch only for the one node that said it held it; otherwise a higher one.
          const holds =
            named !== undefined && named.epoch === top && (named.role === 'primary' || named.role === 'pending');
          return (
            hbs.has(leader.primary) &&
            (leader.epoch === top
              ? holds && leader.handover === 'immediate'
              : leader.epoch === top + 1 && leader.handover === 'await-fence')
          );
        },
      ),
    );
  });
});

describe('highestKnownEpoch', () => {
  it('counts a claimed failover as the epoch it promotes to', () => {
    const state: WatchdogState = {
      ...emptyWatchdogState(),
      origin: { primary: 'node-1', epoch: 2 },
      nodes: {
        'node-1': {
          counter: { boot: null, lastSeq: -1, last: null, failing: 0, healthy: 0, lastFault: null },
          incident: {
            id: 'node-1-e7-i1',
            kind: 'stall',
            openedAt: 0,
            epoch: 7,
            restart: null,
            stage: {
              name: 'failing-over',
              failover: { to: 'node-2', fromEpoch: 7, claimedAt: 0, outgoingStopped: false, stopOutgoing: true },
            },
          },
          restartTimes: [],
          rejoinTimes: [],
          incidents: 1,
          newest: null,
        },
      },
    };
    expect(highestKnownEpoch(state, beats(beat('node-2', 3, 'standby')))).toBe(8);
  });
});

describe('seededState', () => {
  it('starts each node and admission from the highest number among the written events', () => {
    const state = seededState([
      'node-1-e3-i4',
      'node-1-e2-i9',
      'node-2-e3-i1',
      'admission-6',
      'admission-2',
      'leader-damaged-abc',
      'not-an-id',
    ]);
    expect(state.nodes['node-1']?.incidents).toBe(9);
    expect(state.nodes['node-2']?.incidents).toBe(1);
    expect(state.admission?.changes).toBe(6);
    expect(seededState([])).toEqual(emptyWatchdogState());
  });
});

describe('damageId', () => {
  it('names one damaged version the same way for every run, whatever its ETag holds', () => {
    expect(damageId('leader', '"9b2cf535f27731c974343645a3985328"')).toBe(
      'leader-damaged-9b2cf535f27731c974343645a3985328',
    );
    expect(damageId('state', '""')).toBe('state-damaged-unknown');
  });
});
