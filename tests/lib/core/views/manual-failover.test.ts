import {
  leaderReason,
  planManualFailover,
  promotedSummary,
  type ManualFailoverInput,
} from '../../../../lib/core/views/manual-failover';
import type { Leader } from '../../../../lib/core/schemas';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import type { Incident } from '../../../../lib/core/fleet/watchdog-state';
import { heartbeat, NODES, sample } from '../../../helpers/fixtures';

const NOW = 1_800_000_000_000;
const leader: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 4,
  renewals: 9,
  reason: 'test',
  changedBy: 'test',
  previous: null,
  handover: 'immediate',
};
const standby = (over = {}) => ({
  heartbeat: { state: 'ok' as const, value: heartbeat('node-2', [sample(0, { epochSeen: 4, ...over })]) },
  writtenAt: NOW - 5000,
});
const input = (over: Partial<ManualFailoverInput> = {}): ManualFailoverInput => ({
  to: 'node-2',
  force: false,
  nodes: NODES,
  leader: { state: 'ok', value: leader },
  heartbeats: new Map([['node-2', standby()]]),
  watchdog: { state: 'missing' },
  now: NOW,
  sampleMs: 15_000,
  nonce: '0a1b2c3d',
  ...over,
});

/** A watchdog state with an incident on node-1 whose step is in flight. */
const busyWith = (over: Partial<Incident>): ManualFailoverInput['watchdog'] => ({
  state: 'ok',
  value: {
    version: 2,
    revision: 1,
    lastFailoverAt: null,
    judgedAt: null,
    nodes: {
      'node-1': {
        counter: emptyCounter(),
        incident: {
          id: 'node-1-e4-i1',
          kind: 'stall',
          openedAt: 1,
          epoch: 4,
          stage: { name: 'watching' },
          restart: null,
          ...over,
        },
        restartTimes: [],
        rejoinTimes: [],
        incidents: 1,
        newest: null,
      },
    },
  },
});

describe('planManualFailover', () => {
  it('moves the role from the primary and epoch it read, under a manual incident id', () => {
    expect(planManualFailover(input())).toEqual({
      kind: 'go',
      from: 'node-1',
      fromEpoch: 4,
      to: 'node-2',
      incidentId: `manual-4-${NOW}-0a1b2c3d`,
      overridden: [],
    });
  });

  it('rejects a node the configuration does not name, as a bad --to', () => {
    expect(planManualFailover(input({ to: 'node-9' }))).toEqual({
      kind: 'unknown-node',
      message: '--to: node-9 is not a configured node (nodes: node-1, node-2)',
    });
  });

  it.each([
    ['the primary itself', input({ to: 'node-1' }), 'node-1 is already the primary (epoch 4)'],
    ['no leader.json', input({ leader: { state: 'missing' } }), 'leader.json does not exist'],
    [
      'a corrupt leader.json',
      input({ leader: { state: 'corrupt', error: 'epoch: too small' } }),
      'leader.json is corrupt (epoch: too small)',
    ],
    [
      'a standby without worker',
      input({ heartbeats: new Map([['node-2', standby({ workerProcesses: 0 })]]) }),
      'node-2 is not ready: it has no live worker process. Use --ignore-readiness',
    ],
    [
      'while the watchdog fails the primary over',
      input({
        watchdog: busyWith({
          stage: {
            name: 'failing-over',
            failover: { to: 'node-2', fromEpoch: 4, claimedAt: 1, outgoingStopped: false, stopOutgoing: true },
          },
        }),
      }),
      'node-2 is ready, but the watchdog is failing node-1 over to node-2 (incident node-1-e4-i1)',
    ],
    [
      'while the watchdog restarts the primary',
      input({
        watchdog: busyWith({ stage: { name: 'restart-claimed' }, restart: { command: 'restartWorker', claimedAt: 1 } }),
      }),
      "the watchdog is restarting node-1's worker",
    ],
  ])('refuses %s', (_, i, message) => {
    const plan = planManualFailover(i);
    expect(plan.kind).toBe('refuse');
    expect(plan.kind === 'refuse' && plan.message).toContain(message);
  });

  it('goes ahead with --ignore-readiness and remembers what it overrode', () => {
    const plan = planManualFailover(input({ force: true, heartbeats: new Map() }));
    expect(plan).toMatchObject({ kind: 'go', overridden: ['it has no heartbeat'] });
  });

  it.each([true, false])(
    'refuses the primary itself and a missing leader.json even with --ignore-readiness=%p',
    (force) => {
      expect(planManualFailover(input({ to: 'node-1', force })).kind).toBe('refuse');
      expect(planManualFailover(input({ leader: { state: 'missing' }, force })).kind).toBe('refuse');
    },
  );
});

describe('leaderReason and promotedSummary', () => {
  it("carry the operator's reason, and say when --ignore-readiness was used", () => {
    const plan = planManualFailover(input({ force: true, heartbeats: new Map() }));
    if (plan.kind !== 'go') throw new Error('expected a plan');
    expect(leaderReason(plan, 'kernel update')).toBe(
      `manual-4-${NOW}-0a1b2c3d: node-1 → node-2: kernel update (--ignore-readiness)`,
    );
    const summary = promotedSummary(plan, {
      reason: 'kernel update',
      newEpoch: 5,
      handover: 'await-fence',
      outgoingStopped: false,
    });
    expect(summary).toContain('node-2 is primary of epoch 5 (starts once the old lease has lapsed)');
    expect(summary).toContain('Reason: kernel update.');
    expect(summary).toContain('--ignore-readiness overrode: it has no heartbeat.');
  });
});
