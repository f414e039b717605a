import type { Confirmation } from '../../../../lib/core/fleet/liveness';
import { judge } from '../../../helpers/judge';
import { readyStandbys } from '../../../../lib/core/fleet/readiness';
import type { Heartbeat } from '../../../../lib/core/schemas';
import { markFailover, markRestartResult, markRestartSent } from '../../../../lib/core/fleet/outcomes';
import { withAdmission, type WatchdogAction } from '../../../../lib/core/fleet/watchdog';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import { frozen, heartbeat, sample, working, leaderOf, watchdogSettings } from '../../../helpers/fixtures';

const NODES3 = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 3 },
  { name: 'node-3', instanceId: 'mi-00000000000000003', priority: 2 },
];
const settings = watchdogSettings(NODES3);
const leader = leaderOf({ epoch: 4, renewals: 9, reason: 't', changedBy: 't' });
const T0 = 1_800_000_000_000;

const standbyBeat = (node: string, seqTo = 9): Heartbeat => ({
  ...heartbeat(
    node,
    working(0, seqTo).map((s) => ({ ...s, epochSeen: 4, consumingEpoch: null })),
  ),
  role: 'standby',
});
const beats = (...hbs: Heartbeat[]): Map<string, Heartbeat> => new Map(hbs.map((h) => [h.node, h]));
const published = (actions: WatchdogAction[]): string[] =>
  actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []));
const failovers = (actions: WatchdogAction[]) => actions.flatMap((a) => (a.kind === 'failover' ? [a] : []));

/** Runs decide over a sequence of rounds, carrying the state along. */
type Round = { at: number; hbs: Heartbeat[]; conf?: Record<string, Confirmation>; renewals?: number };
const rounds = (steps: Round[], start: WatchdogState = emptyWatchdogState()) => {
  let state = start;
  const all: WatchdogAction[] = [];
  for (const s of steps) {
    const lease = { ...leader, renewals: s.renewals ?? leader.renewals };
    const v = judge(state, lease, beats(...s.hbs), T0 + s.at, settings, new Map(Object.entries(s.conf ?? {})));
    state = v.state;
    all.push(...v.actions);
  }
  return { state, actions: all };
};

describe('failover ladder', () => {
  it('fails a persistently stalled primary over to the highest-priority ready standby', () => {
    const first = rounds([
      { at: 0, hbs: [heartbeat('node-1', frozen(0, 9)), standbyBeat('node-2'), standbyBeat('node-3')] },
    ]);
    const sent = markRestartSent(first.state, 'node-1', 'node-1-e4-i1', 'cmd-1', T0 + 1000)!.state;
    const { actions, state } = rounds(
      [
        {
          at: 130_000,
          hbs: [heartbeat('node-1', frozen(0, 17)), standbyBeat('node-2', 17), standbyBeat('node-3', 17)],
        },
      ],
      sent,
    );
    expect(published([...first.actions, ...actions])).toEqual(['STALLED', 'STILL_STALLED', 'FAILOVER_STARTED']);
    expect(failovers(actions)).toEqual([
      expect.objectContaining({
        node: 'node-1',
        step: expect.objectContaining({ to: 'node-3', fromEpoch: 4, stopOutgoing: true, outgoingStopped: false }),
      }),
    ]);
    // The round that starts the failover holds input at once (no queue read needed),
    // alerting with the round's own alerts, before the failover's slow steps.
    const marks = { ...settings, admissionHighMark: 20, admissionLowMark: 5 };
    const round = judge(
      sent,
      leader,
      beats(heartbeat('node-1', frozen(0, 17)), standbyBeat('node-2', 17), standbyBeat('node-3', 17)),
      T0 + 130_000,
      settings,
    );
    const held = withAdmission(round, null, leader, beats(), T0 + 130_000, marks);
    expect(held.state.admission).toMatchObject({ held: true, reason: 'a failover is under way', changes: 1 });
    expect(held.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a.kind))).toEqual([
      'verify',
      'STILL_STALLED',
      'FAILOVER_STARTED',
      'INPUT_HELD',
      'failover',
    ]);
    // Once over, a run that read the queues resumes at the low mark and tops the task queue up to the high mark.
    const over = {
      ...round,
      state: {
        ...held.state,
        nodes: { ...held.state.nodes, 'node-1': { ...held.state.nodes['node-1'], incident: null } },
      },
      actions: [],
    };
    expect(withAdmission(over, { backlog: 6, intake: 50 }, leader, beats(), T0 + 200_000, marks).actions).toEqual([]);
    const resumed = withAdmission(over, { backlog: 5, intake: 50 }, leader, beats(), T0 + 260_000, marks);
    expect(resumed.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a))).toEqual([
      'INPUT_RESUMED',
      { kind: 'admit', count: 15 },
    ]);
    // The next round while the failover is under way does not start another.
    const again = judge(
      state,
      leader,
      beats(heartbeat('node-1', frozen(0, 18)), standbyBeat('node-2', 18), standbyBeat('node-3', 18)),
      T0 + 131_000,
      settings,
    );
    expect(failovers(again.actions)).toEqual([]);
  });

  it('fails a dead primary over at once, without a restart', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5), standbyBeat('node-3', 5)] },
      {
        at: 91_000,
        hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7), standbyBeat('node-3', 7)],
        conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } },
      },
    ]);
    expect(published(actions)).toEqual(['NODE_DEAD', 'FAILOVER_STARTED']);
    expect(actions.some((a) => a.kind === 'command')).toBe(false);
    expect(failovers(actions)[0]?.step).toMatchObject({ to: 'node-3', outgoingStopped: true, stopOutgoing: false });
  });

  it('only alerts a silent primary that AWS does not confirm gone, and leaves the role to the lease', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      { at: 91_000, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)] },
      // A crashed VM a minute later: Lightsail still says running, SSM still online.
      {
        at: 92_000,
        hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)],
        conf: { 'node-1': { instance: 'running', ssm: 'online' } },
      },
      {
        at: 106_000,
        hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 8)],
        conf: { 'node-1': { instance: 'unknown', ssm: 'unknown' } },
      },
    ]);
    expect(published(actions)).toEqual(['NODE_SILENT']);
    expect(actions.filter((a) => a.kind === 'command' || a.kind === 'failover')).toEqual([]);
  });

  it('judges the primary by its lease: silent once it has not changed for its expiry and a schedule period', () => {
    const running = { 'node-1': { instance: 'running' as const, ssm: 'online' as const } };
    /** A run every 30 s; `renewals[i]` is the lease's renewal count then. Returns each run's alerts. */
    const run = (renewals: number[]) => {
      let state = emptyWatchdogState();
      return renewals.map((n, i) => {
        const v = judge(
          state,
          { ...leader, renewals: n },
          beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5 + i)),
          T0 + i * 30_000,
          settings,
          new Map(Object.entries(running)),
        );
        state = v.state;
        return published(v.actions);
      });
    };
    // Renewed all along: alive in every run, whatever its heartbeat object says.
    expect(run([1, 4, 7, 10, 13, 16]).flat()).toEqual([]);
    // Renewals stop after 30 s: silent 90 s later, not before.
    expect(run([1, 4, 4, 4, 4, 4, 4])).toEqual([[], [], [], [], ['NODE_SILENT'], [], []]);
  });

  it('takes a standby taking over the lease as the verdict on the old primary, and lets traffic follow', () => {
    const routed = { ...settings, routed: true };
    const alive = judge(
      emptyWatchdogState(),
      leader,
      beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)),
      T0,
      routed,
    );
    const taken = { ...leader, primary: 'node-2', epoch: 5, renewals: 0, changedBy: 'node-2', previous: 'node-1' };
    const conf = new Map([['node-1', { instance: 'running' as const, ssm: 'online' as const }]]);
    const v = judge(
      alive.state,
      taken,
      beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 6)),
      T0 + 40_000,
      routed,
      conf,
    );
    expect(published(v.actions)).toEqual(['NODE_SILENT']);
    expect(v.actions).toContainEqual({ kind: 'route', primary: 'node-2', epoch: 5 });
    // The role has moved: nothing stays open for the old primary, and no failover is started.
    expect(v.state.nodes['node-1']?.incident).toBeNull();
    expect(failovers(v.actions)).toEqual([]);
    // Confirmed gone by AWS: the same verdict says so.
    const dead = new Map([['node-1', { instance: 'stopped' as const, ssm: 'online' as const }]]);
    expect(published(judge(alive.state, taken, beats(), T0 + 40_000, routed, dead).actions)).toEqual(['NODE_DEAD']);
  });

  it(
    'alerts a lost standby after 2 × max(sample, schedule) ' +
      'and restarts its agent, unless AWS says its node is gone',
    () => {
      const steps = (conf: Confirmation): Round[] => [
        { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)], renewals: 10 },
        {
          at: 60_000,
          hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)],
          renewals: 16,
          conf: { 'node-2': conf },
        },
        {
          at: 119_000,
          hbs: [heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)],
          renewals: 22,
          conf: { 'node-2': conf },
        },
        {
          at: 121_000,
          hbs: [heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)],
          renewals: 23,
          conf: { 'node-2': conf },
        },
      ];
      const { actions } = rounds(steps({ instance: 'running', ssm: 'online' }));
      expect(published(actions)).toEqual(['REDUNDANCY_LOST']);
      expect(actions.filter((a) => a.kind === 'command')).toEqual([
        expect.objectContaining({ command: 'restartAgent', node: 'node-2' }),
      ]);
      const gone = rounds(steps({ instance: 'stopped', ssm: 'lost' })).actions;
      expect(published(gone)).toEqual(['REDUNDANCY_LOST']);
      expect(gone.filter((a) => a.kind === 'command')).toEqual([]);
    },
  );

  it(
    'judges no loss it could not see: after its own runs failed, ' + 'or a gap of a whole loss window, clocks restart',
    () => {
      const { state } = rounds([{ at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] }]);
      const online = new Map([['node-2', { instance: 'running' as const, ssm: 'online' as const }]]);
      const renewed = { ...leader, renewals: 20 };
      const hbs = beats(heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5));
      // Runs failed until now (S3 down for the watchdog too): nothing is judged from the time before.
      const back = judge({ ...state, judgedAt: T0 + 100_000 }, renewed, hbs, T0 + 130_000, settings, online, {
        blind: true,
      });
      expect(back.actions).toEqual([]);
      // No judgement stored for a whole loss window: the same.
      expect(judge(state, renewed, hbs, T0 + 130_000, settings, online).actions).toEqual([]);
      // Looking all along, the same silence is a lost standby; after the blind run it counts from then.
      expect(
        published(judge({ ...state, judgedAt: T0 + 100_000 }, renewed, hbs, T0 + 130_000, settings, online).actions),
      ).toEqual(['REDUNDANCY_LOST']);
      const later = { ...leader, renewals: 30 };
      expect(published(judge(back.state, later, hbs, T0 + 240_000, settings, online).actions)).toEqual([]);
      expect(
        published(judge({ ...back.state, judgedAt: T0 + 240_000 }, later, hbs, T0 + 250_000, settings, online).actions),
      ).toEqual(['REDUNDANCY_LOST']);
    },
  );

  it('points the origin record at whoever leader.json names, once per epoch', () => {
    const routed = { ...settings, routed: true };
    const first = judge(emptyWatchdogState(), leader, beats(heartbeat('node-1', working(0, 5))), T0, routed);
    expect(first.actions).toContainEqual({ kind: 'route', primary: 'node-1', epoch: 4 });
    const settled = { ...first.state, origin: { primary: 'node-1', epoch: 4 } };
    expect(
      judge(settled, leader, beats(heartbeat('node-1', working(0, 6))), T0 + 15_000, routed).actions.filter(
        (a) => a.kind === 'route',
      ),
    ).toEqual([]);
    // A standby promoted itself: epoch 5 names node-2.
    const moved = judge(
      settled,
      { ...leader, primary: 'node-2', epoch: 5 },
      beats(heartbeat('node-1', working(0, 6))),
      T0 + 15_000,
      routed,
    );
    expect(moved.actions).toContainEqual({ kind: 'route', primary: 'node-2', epoch: 5 });
    expect(judge(settled, leader, beats(), T0, settings).actions.filter((a) => a.kind === 'route')).toEqual([]);
  });

  it('alerts a lost standby once, and its return once', () => {
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)], renewals: 10 },
      { at: 60_000, hbs: [heartbeat('node-1', working(0, 6)), standbyBeat('node-2', 5)], renewals: 16 },
      {
        at: 121_000,
        hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)],
        renewals: 22,
        conf: { 'node-2': { instance: 'stopped', ssm: 'lost' } },
      },
      {
        at: 135_000,
        hbs: [heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 5)],
        renewals: 24,
        conf: { 'node-2': { instance: 'stopped', ssm: 'lost' } },
      },
      {
        at: 150_000,
        hbs: [heartbeat('node-1', working(0, 9)), { ...standbyBeat('node-2', 1), boot: 'boot-2' }],
        renewals: 26,
      },
    ]);
    expect(published(actions)).toEqual(['REDUNDANCY_LOST', 'RECOVERED']);
  });

  it(
    "reads a sent agent restart's result before closing the incident " +
      'of a standby heard from again, and counts it ready meanwhile',
    () => {
      const lost = rounds([
        { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)], renewals: 10 },
        { at: 60_000, hbs: [heartbeat('node-1', working(0, 6)), standbyBeat('node-2', 5)], renewals: 16 },
        {
          at: 121_000,
          hbs: [heartbeat('node-1', working(0, 7)), standbyBeat('node-2', 5)],
          renewals: 22,
          conf: { 'node-2': { instance: 'running', ssm: 'online' } },
        },
      ]);
      const sent = markRestartSent(lost.state, 'node-2', 'node-2-e4-i1', 'cmd-9', T0 + 122_000)!.state;
      // The restarted agent writes at once, before the command's result was read.
      const back = judge(
        sent,
        leader,
        beats(heartbeat('node-1', working(0, 8)), standbyBeat('node-2', 6)),
        T0 + 126_000,
        settings,
      );
      expect(published(back.actions)).toEqual([]);
      expect(back.actions).toContainEqual(
        expect.objectContaining({ kind: 'verify', node: 'node-2', commandId: 'cmd-9' }),
      );
      const input = {
        nodes: settings.nodes,
        watches: back.state.nodes,
        heartbeats: beats(standbyBeat('node-2', 6)),
        leader,
      };
      expect(
        readyStandbys({ ...input, now: T0 + 126_000, sampleMs: 15_000, lostMs: 120_000, unready: new Set() }).map(
          (n) => n.name,
        ),
      ).toEqual(['node-2']);
      const verified = markRestartResult(back.state, 'node-2', 'node-2-e4-i1', true, 'Success', T0 + 127_000)!;
      expect(verified.event?.kind).toBe('RESTART_RESULT');
      const closed = judge(
        verified.state,
        leader,
        beats(heartbeat('node-1', working(0, 9)), standbyBeat('node-2', 7)),
        T0 + 141_000,
        settings,
      );
      expect(published(closed.actions)).toEqual(['RECOVERED']);
      expect(closed.state.nodes['node-2']?.incident).toBeNull();
    },
  );

  it('holds a failover back within the cooldown and says so once', () => {
    const start = { ...emptyWatchdogState(), lastFailoverAt: T0 - 10_000 };
    const { actions } = rounds(
      [
        { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
        {
          at: 91_000,
          hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)],
          conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } },
        },
        {
          at: 106_000,
          hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 8)],
          conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } },
        },
      ],
      start,
    );
    expect(published(actions)).toEqual(['NODE_DEAD', 'NO_STANDBY']);
    expect(failovers(actions)).toEqual([]);
  });

  it('never picks a standby that is silent, has no worker, or lags an epoch', () => {
    const lagging = (to: number): Heartbeat => ({
      ...standbyBeat('node-3', to),
      samples: standbyBeat('node-3', to).samples.map((s) => ({ ...s, epochSeen: 3 })),
    });
    const noWorker = (seq: number): Heartbeat => ({
      ...standbyBeat('node-2'),
      samples: [sample(seq, { workerProcesses: 0, epochSeen: 4 })],
    });
    const { actions } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), noWorker(0), lagging(9)] },
      {
        at: 91_000,
        hbs: [heartbeat('node-1', working(0, 5)), noWorker(2), lagging(11)],
        conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } },
      },
    ]);
    expect(published(actions)).toEqual(['NODE_DEAD', 'NO_STANDBY']);
  });

  it('re-issues a failover whose claimer went quiet, once per stale window, and closes it when done', () => {
    const { state } = rounds([
      { at: 0, hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 5)] },
      {
        at: 91_000,
        hbs: [heartbeat('node-1', working(0, 5)), standbyBeat('node-2', 7)],
        conf: { 'node-1': { instance: 'stopped', ssm: 'lost' } },
      },
    ]);
    const stale = judge(state, leader, beats(standbyBeat('node-2', 20)), T0 + 91_000 + 71_000, settings);
    expect(failovers(stale.actions)).toHaveLength(1);
    const notYet = judge(stale.state, leader, beats(standbyBeat('node-2', 21)), T0 + 91_000 + 72_000, settings);
    expect(failovers(notYet.actions)).toHaveLength(0);
    const incidentId = state.nodes['node-1'].incident!.id;
    const done = markFailover(stale.state, 'node-1', incidentId, true, 'done', T0 + 103_000);
    expect(done?.state.nodes['node-1']?.incident).toBeNull();
    expect(done?.state.lastFailoverAt).toBe(T0 + 103_000);
    expect(markFailover(done!.state, 'node-1', incidentId, true, 'done', T0 + 104_000)).toBeNull();
  });
});
