import type { Confirmation } from '../../../lib/core/liveness';
import type { Heartbeat, Leader } from '../../../lib/core/schemas';
import { decide, markFailover, markRestartSent, type WatchdogAction, type WatchdogSettings } from '../../../lib/core/watchdog';
import { emptyWatchdogState, type WatchdogState } from '../../../lib/core/watchdog-state';
import { frozen, heartbeat, sample, working } from '../../helpers/fixtures';

const NODES3 = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 3 },
  { name: 'node-3', instanceId: 'mi-00000000000000003', priority: 2 },
];
const settings: WatchdogSettings = { nodes: NODES3, stallSamples: 8, recoverySamples: 2, restartBudgetPerHour: 3, restartVerifySeconds: 60, sampleIntervalSeconds: 15, failoverCooldownSeconds: 300, commandWaitSeconds: 10 };
const leader: Leader = { version: 1, primary: 'node-1', epoch: 4, renewals: 9, reason: 't', changedBy: 't', previous: null, handover: 'immediate' };
const T0 = 1_800_000_000_000;

const standbyBeat = (node: string, seqTo = 9): Heartbeat => ({ ...heartbeat(node, working(0, seqTo).map((s) => ({ ...s, epochSeen: 4, consumingEpoch: null }))), role: 'standby' });
const beats = (...hbs: Heartbeat[]): Map<string, Heartbeat> => new Map(hbs.map((h) => [h.node, h]));
const published = (actions: WatchdogAction[]): string[] => actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []));
const failovers = (actions: WatchdogAction[]) => actions.flatMap((a) => (a.kind === 'failover' ? [a] : []));

/** Runs decide over a sequence of rounds, carrying the state along. */
const rounds = (steps: { at: number; hbs: Heartbeat[]; conf?: Record<string, Confirmation> }[], start: WatchdogState = emptyWatchdogState()) => {
  let state = start;
  const all: WatchdogAction[] = [];
  for (const s of steps) {
    const v = decide(state, leader, beats(...s.hbs), T0 + s.at, settings, new Map(Object.entries(s.conf ?? {})));
    state = v.state;
    all.push(...v.actions);
  }
  return { state, actions: all };
};

describe('failover ladder', () => {
  it('fails a persistently stalled primary over to the highest-priority ready standby', () => {
    const first = rounds([{ at: 0, hbs: [heartbeat('node-1', frozen(0, 9)), standbyBeat('node-2'), standbyBeat('node-3')] }]);
    const sent = markRestartSent(first.state, 'node-1', 'node-1-e4-i1', 'cmd-1', T0 + 1000)!.state;
    const { actions, state } = rounds([{ at: 130_000, hbs: [heartbeat('node-1', frozen(0, 17)), standbyBeat('node-2', 17), standbyBeat('node-3', 17)] }], sent);
    expect(published([...first.actions, ...actions])).toEqual(['STALLED', 'STILL_STALLED', 'FAILOVER_STARTED']);
    expect(failovers(actions)).toEqual([expect.objectContaining({ node: 'node-1', step: expect.objectContaining({ to: 'node-3', fromEpoch: 4, stopOutgoing: true, outgoingStopped: false }) })]);
    // The next round while the failover is under way does not start another.
    const again = decide(state, leader, beats(heartbeat('node-1', frozen(0, 18)), standbyBeat('node-2', 18), standbyBeat('node-3', 18)), T0 + 131_000, settings);
    expect(failovers(again.actions)).toEqual([]);
  });

  it('fails a dead primary over at once, without a restart', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5), standbyBeat('node-3', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7), standbyBeat('node-3', 7)], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
    ]);
    expect(published(actions)).toEqual(['NODE_DEAD', 'FAILOVER_STARTED']);
    expect(actions.some((a) => a.kind === 'command')).toBe(false);
    expect(failovers(actions)[0]?.step).toMatchObject({ to: 'node-3', outgoingStopped: true, stopOutgoing: false });
  });

  it('waits for a confirmation before calling a silent node dead', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)] },
      { at: 32_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'unknown', ssm: 'unknown' } } },
    ]);
    expect(actions).toEqual([]);
  });

  it('restarts a silent agent on a live instance instead of failing over', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'running', ssm: 'online' } } },
    ]);
    expect(published(actions)).toEqual(['AGENT_DEAD']);
    expect(actions).toContainEqual(expect.objectContaining({ kind: 'command', command: 'restartAgent', node: 'node-1' }));
  });

  it('alerts a lost standby once, and its return once', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)], conf: { 'node-2': { instance: 'stopped', ssm: 'lost' } } },
      { at: 45_000, hbs: [heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)], conf: { 'node-2': { instance: 'stopped', ssm: 'lost' } } },
      { at: 60_000, hbs: [heartbeat('node-1', working(0, 9)), { ...standbyBeat('node-2', 1), boot: 'boot-2' }] },
    ]);
    expect(published(actions)).toEqual(['REDUNDANCY_LOST', 'RECOVERED']);
  });

  it('holds a failover back within the cooldown and says so once', () => {
    const start = { ...emptyWatchdogState(), lastFailoverAt: T0 - 10_000 };
    const { actions } = rounds(
      [
        { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
        { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
        { at: 46_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 8)], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
      ],
      start,
    );
    expect(published(actions)).toEqual(['NODE_DEAD', 'NO_STANDBY']);
    expect(failovers(actions)).toEqual([]);
  });

  it('never picks a standby that is silent, has no worker, or lags an epoch', () => {
    const lagging = { ...standbyBeat('node-3'), samples: standbyBeat('node-3').samples.map((s) => ({ ...s, epochSeen: 3 })) };
    const noWorker = { ...standbyBeat('node-2'), samples: [sample(0, { workerProcesses: 0, epochSeen: 4 })] };
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), noWorker, lagging] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), noWorker, lagging], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
    ]);
    expect(published(actions)).toEqual(['NODE_DEAD', 'NO_STANDBY']);
  });

  it('re-issues a failover whose claimer went quiet, once per stale window, and closes it when done', () => {
    const { state } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
    ]);
    const stale = decide(state, leader, beats(standbyBeat('node-2', 20)), T0 + 31_000 + 71_000, settings);
    expect(failovers(stale.actions)).toHaveLength(1);
    const notYet = decide(stale.state, leader, beats(standbyBeat('node-2', 21)), T0 + 31_000 + 72_000, settings);
    expect(failovers(notYet.actions)).toHaveLength(0);
    const incidentId = state.nodes['node-1'].incident!.id;
    const done = markFailover(stale.state, 'node-1', incidentId, true, 'done', T0 + 103_000);
    expect(done?.state.nodes['node-1']?.incident).toBeNull();
    expect(done?.state.lastFailoverAt).toBe(T0 + 103_000);
    expect(markFailover(done!.state, 'node-1', incidentId, true, 'done', T0 + 104_000)).toBeNull();
  });
});
