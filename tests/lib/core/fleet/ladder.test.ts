import { readyStandbys, type Confirmation } from '../../../../lib/core/fleet/liveness';
import type { Heartbeat, Leader } from '../../../../lib/core/schemas';
import { decide, markFailover, unseenIntervals, markRestartResult, markRestartSent, withAdmission, type WatchdogAction, type WatchdogSettings } from '../../../../lib/core/fleet/watchdog';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import { frozen, heartbeat, sample, working } from '../../../helpers/fixtures';

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
    // The round that starts the failover holds input at once (no queue read needed), alerting with the round's own alerts, before the failover's slow steps.
    const marks = { ...settings, admissionHighMark: 20, admissionLowMark: 5 };
    const round = decide(sent, leader, beats(heartbeat('node-1', frozen(0, 17)), standbyBeat('node-2', 17), standbyBeat('node-3', 17)), T0 + 130_000, settings);
    const held = withAdmission(round, null, leader, beats(), T0 + 130_000, marks);
    expect(held.state.admission).toMatchObject({ held: true, reason: 'a failover is under way', changes: 1 });
    expect(held.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a.kind))).toEqual(['verify', 'STILL_STALLED', 'FAILOVER_STARTED', 'INPUT_HELD', 'failover']);
    // Once over, a run that read the queues resumes at the low mark and tops the task queue up to the high mark.
    const over = { ...round, state: { ...held.state, nodes: { ...held.state.nodes, 'node-1': { ...held.state.nodes['node-1'], incident: null } } }, actions: [] };
    expect(withAdmission(over, { backlog: 6, intake: 50 }, leader, beats(), T0 + 200_000, marks).actions).toEqual([]);
    const resumed = withAdmission(over, { backlog: 5, intake: 50 }, leader, beats(), T0 + 260_000, marks);
    expect(resumed.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a))).toEqual(['INPUT_RESUMED', { kind: 'admit', count: 15 }]);
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

  it('only alerts a silent primary that AWS does not confirm gone, and leaves the role to the lease', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)] },
      // A crashed VM a minute later: Lightsail still says running, SSM still online.
      { at: 32_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'running', ssm: 'online' } } },
      { at: 46_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 8)], conf: { 'node-1': { instance: 'unknown', ssm: 'unknown' } } },
    ]);
    expect(published(actions)).toEqual(['NODE_SILENT']);
    expect(actions.filter((a) => a.kind === 'command' || a.kind === 'failover')).toEqual([]);
  });

  it("takes the primary's lease renewals for its liveness: a heartbeat left alone is no silence while they carry newer samples", () => {
    const hb = heartbeat('node-1', working(0, 5));
    const running = new Map([['node-1', { instance: 'running' as const, ssm: 'online' as const }]]);
    /** A round every 15 s; `beats[i]` is the sample the lease carries then. Returns each round's alerts. */
    const run = (carried: number[]) => {
      let state = emptyWatchdogState();
      return carried.map((seq, i) => {
        const v = decide(state, { ...leader, beat: { boot: hb.boot, seq } }, beats(hb, standbyBeat('node-2', 5 + i)), T0 + i * 15_000, settings, running);
        state = v.state;
        return published(v.actions);
      });
    };
    // The renewals carry samples 6 to 12 over 90 s: the primary is alive in every round.
    expect(run([6, 7, 8, 9, 10, 11, 12]).flat()).toEqual([]);
    // They stop carrying new ones after 30 s (its sample loop hung): silent two intervals later, not before.
    expect(run([6, 7, 8, 8, 8, 8])).toEqual([[], [], [], [], ['NODE_SILENT'], []]);
  });

  it('fails the silent primary over once AWS confirms it gone, after its NODE_SILENT', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)], conf: { 'node-1': { instance: 'running', ssm: 'online' } } },
      ...[8, 9, 10, 11, 12, 13, 14].map((seq, i) => ({ at: 46_000 + i * 15_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', seq)], conf: { 'node-1': { instance: 'running' as const, ssm: 'online' as const } } })),
      // Its stop reached Lightsail's `stopped` (or SSM gave up on its agent): now it is confirmed gone.
      { at: 160_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 15)], conf: { 'node-1': { instance: 'stopped', ssm: 'online' } } },
      { at: 175_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 16)], conf: { 'node-1': { instance: 'stopped', ssm: 'online' } } },
    ]);
    expect(published(actions)).toEqual(['NODE_SILENT', 'NODE_DEAD', 'FAILOVER_STARTED']);
    expect(failovers(actions)).toHaveLength(1);
  });

  it('alerts a silent standby and restarts its agent, unless AWS says its node is gone', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)], conf: { 'node-2': { instance: 'running', ssm: 'online' } } },
      { at: 45_000, hbs: [heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)], conf: { 'node-2': { instance: 'running', ssm: 'online' } } },
    ]);
    expect(published(actions)).toEqual(['REDUNDANCY_LOST']);
    expect(actions.filter((a) => a.kind === 'command')).toEqual([expect.objectContaining({ command: 'restartAgent', node: 'node-2' })]);
  });

  it('judges no silence it could not see: after its own runs failed, silence counts again from now', () => {
    const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }]);
    const online = new Map([['node-1', { instance: 'running' as const, ssm: 'online' as const }], ['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    // 45 s of failed runs (S3 down for the watchdog too); the nodes' first heartbeats after it are not in yet.
    const back = decide(state, leader, beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)), T0 + 45_000, settings, online, { failing: true, troubledSince: null });
    expect(back.actions).toEqual([]);
    expect(decide(back.state, leader, beats(heartbeat('node-1', working(0, 6)), standbyBeat('node-2', 6)), T0 + 52_000, settings).actions).toEqual([]);
    // Without the failed runs, the watchdog looking all along (a judgement 15 s ago), the same silence is a lost standby.
    const looking = { ...state, judgedAt: T0 + 30_000 };
    expect(published(decide(looking, leader, beats(heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)), T0 + 45_000, settings, online).actions)).toEqual(['REDUNDANCY_LOST']);
  });

  it('counts only a troubled look’s own time as unseen: a throttled read 30 s into a silence does not put the verdict off two intervals', () => {
    const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }, { at: 29_000, hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)] }]);
    const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    const hbs = beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5));
    // The look began at 30.5 s and its reads needed retries until 32 s: node-2 was silent 30.5 s when it began.
    expect(published(decide(state, leader, hbs, T0 + 32_000, settings, online, { failing: false, troubledSince: T0 + 30_500 }).actions)).toEqual(['REDUNDANCY_LOST']);
    // The same look beginning before the threshold (at 29.5 s) leaves node-2 0.5 s short of it: no verdict from that look; the next clear look gives it.
    const short = decide(state, leader, hbs, T0 + 32_000, settings, online, { failing: false, troubledSince: T0 + 29_500 });
    expect(short.actions.filter((a) => a.kind === 'publish')).toEqual([]);
    expect(published(decide(short.state, leader, beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)), T0 + 33_600, settings, online).actions)).toEqual(['REDUNDANCY_LOST']);
  });

  it('judges no silence when a node says S3 refused its heartbeats', () => {
    const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }]);
    const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    // node-1's first write after the outage says its last two could not be written; node-2's is not in yet.
    const back = decide(state, leader, beats({ ...heartbeat('node-1', working(0, 8)), unsent: 2 }, standbyBeat('node-2', 5)), T0 + 45_000, settings, online);
    expect(back.actions).toEqual([]);
    expect(published(decide({ ...state, judgedAt: T0 + 30_000 }, leader, beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)), T0 + 45_000, settings, online).actions)).toEqual(['REDUNDANCY_LOST']);
  });

  it("takes a node's word of refused writes once: the same heartbeat read again does not blind later runs", () => {
    // The primary's first heartbeat after an outage said so; its renewals then carry its samples
    // and it keeps that object for up to a keep-alive. The standby dies meanwhile.
    const hb = { ...heartbeat('node-1', working(0, 8)), unsent: 2 };
    const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    let state = emptyWatchdogState();
    const seenKinds: string[] = [];
    for (let i = 0; i <= 6; i++) {
      const v = decide(state, { ...leader, beat: { boot: hb.boot, seq: 8 + i } }, beats(hb, standbyBeat('node-2', 8)), T0 + i * 15_000, settings, online);
      state = v.state;
      seenKinds.push(...published(v.actions));
    }
    expect(seenKinds).toEqual(['REDUNDANCY_LOST']);
  });

  it('judges no silence across a gap between judgements longer than the schedule explains, whichever container runs next', () => {
    const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }]);
    const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    // Two scheduled runs can be almost two periods apart (120 s): the gap that says no run got
    // through (S3 down for everyone, and no run fell inside it, so none failed) is longer.
    expect(unseenIntervals(15_000, 60_000)).toBe(9);
    // node-1's first heartbeat after it carries no failed write, and node-2's is not in yet.
    const back = decide(state, leader, beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)), T0 + 137_500, settings, online);
    expect(back.actions).toEqual([]);
    // From then on the watchdog looks again: node-2's silence counts from that run.
    const still = decide(back.state, leader, beats(heartbeat('node-1', working(0, 9)), standbyBeat('node-2', 5)), T0 + 152_000, settings, online);
    expect(published(still.actions)).toEqual([]);
    expect(published(decide(still.state, leader, beats(heartbeat('node-1', working(0, 10)), standbyBeat('node-2', 5)), T0 + 168_000, settings, online).actions)).toEqual(['REDUNDANCY_LOST']);
  });

  it('judges silence across a gap the schedule explains: runs a period apart see a lost standby', () => {
    const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }]);
    const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
    const next = decide(state, { ...leader, beat: { boot: 'boot-1', seq: 12 } }, beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)), T0 + 110_000, settings, online);
    expect(published(next.actions)).toEqual(['REDUNDANCY_LOST']);
  });

  it('points the origin record at whoever leader.json names, once per epoch', () => {
    const routed = { ...settings, routed: true };
    const first = decide(emptyWatchdogState(), leader, beats(heartbeat('node-1', working(0, 5))), T0, routed);
    expect(first.actions).toContainEqual({ kind: 'route', primary: 'node-1', epoch: 4 });
    const settled = { ...first.state, origin: { primary: 'node-1', epoch: 4 } };
    expect(decide(settled, leader, beats(heartbeat('node-1', working(0, 6))), T0 + 15_000, routed).actions.filter((a) => a.kind === 'route')).toEqual([]);
    // A standby promoted itself: epoch 5 names node-2.
    const moved = decide(settled, { ...leader, primary: 'node-2', epoch: 5 }, beats(heartbeat('node-1', working(0, 6))), T0 + 15_000, routed);
    expect(moved.actions).toContainEqual({ kind: 'route', primary: 'node-2', epoch: 5 });
    expect(decide(settled, leader, beats(), T0, settings).actions.filter((a) => a.kind === 'route')).toEqual([]);
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

  it('reads a sent agent restart\'s result before closing the incident of a standby heard from again, and counts it ready meanwhile', () => {
    const lost = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)], conf: { 'node-2': { instance: 'running', ssm: 'online' } } },
    ]);
    const sent = markRestartSent(lost.state, 'node-2', 'node-2-e4-i1', 'cmd-9', T0 + 32_000)!.state;
    // The restarted agent writes at once, before the command's result was read.
    const back = decide(sent, leader, beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 6)), T0 + 36_000, settings);
    expect(published(back.actions)).toEqual([]);
    expect(back.actions).toContainEqual(expect.objectContaining({ kind: 'verify', node: 'node-2', commandId: 'cmd-9' }));
    expect(readyStandbys(settings.nodes, back.state.nodes, beats(standbyBeat('node-2', 6)), leader, T0 + 36_000, 15_000).map((n) => n.name)).toEqual(['node-2']);
    const verified = markRestartResult(back.state, 'node-2', 'node-2-e4-i1', true, 'Success', T0 + 37_000)!;
    expect(verified.event?.kind).toBe('RESTART_RESULT');
    const closed = decide(verified.state, leader, beats(heartbeat('node-1', working(0, 9)), standbyBeat('node-2', 7)), T0 + 51_000, settings);
    expect(published(closed.actions)).toEqual(['RECOVERED']);
    expect(closed.state.nodes['node-2']?.incident).toBeNull();
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
    const lagging = (to: number): Heartbeat => ({ ...standbyBeat('node-3', to), samples: standbyBeat('node-3', to).samples.map((s) => ({ ...s, epochSeen: 3 })) });
    const noWorker = (seq: number): Heartbeat => ({ ...standbyBeat('node-2'), samples: [sample(seq, { workerProcesses: 0, epochSeen: 4 })] });
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), noWorker(0), lagging(9)] },
      { at: 31_000, hbs: [heartbeat('node-1', working(0, 5)), noWorker(2), lagging(11)], conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } } },
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
