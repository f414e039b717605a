import fc from 'fast-check';
import { judgeAlive } from '../../../helpers/judge';
import { frozen, heartbeat, leaderOf, NODES, watchdogSettings, working } from '../../../helpers/fixtures';
import { markRestartSent } from '../../../../lib/core/fleet/outcomes';
import {
  applyChange,
  isPaused,
  promotionHeld,
  settlePause,
  type Maintenance,
  type MaintenanceChange,
} from '../../../../lib/core/fleet/maintenance';
import type { WatchdogAction } from '../../../../lib/core/fleet/watchdog';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import type { Heartbeat } from '../../../../lib/core/schemas';

const settings = watchdogSettings(NODES);
const leader = leaderOf();
const T0 = 1_800_000_000_000;
const note = { at: T0, by: 'ops@laptop', reason: 'patching' };
const PAUSED: Maintenance = { paused: { ...note, forMs: null, until: null }, cordoned: {} };

const standby = (seqTo: number, over: Partial<Heartbeat> = {}): Heartbeat => ({
  ...heartbeat(
    'node-2',
    working(seqTo - 8, 9).map((s) => ({ ...s, consumingEpoch: null })),
  ),
  role: 'standby',
  ...over,
});
const beats = (...hbs: Heartbeat[]): Map<string, Heartbeat> => new Map(hbs.map((h) => [h.node, h]));
const kinds = (actions: WatchdogAction[]): string[] =>
  actions.map((a) => (a.kind === 'publish' ? a.event.kind : a.kind));

/** One run a minute with the primary's worker frozen and the standby working; `seq` grows by four a run. */
const stalledRun = (state: WatchdogState, minute: number) =>
  judgeAlive(
    state,
    leader,
    beats(heartbeat('node-1', frozen(minute * 4, 9)), standby(minute * 4 + 8)),
    T0 + minute * 60_000,
    settings,
  );

const withMaintenance = (state: WatchdogState, maintenance: Maintenance | undefined): WatchdogState => {
  const rest = { ...state };
  delete rest.maintenance;
  return maintenance === undefined ? rest : { ...rest, maintenance };
};

describe('maintenance: pause', () => {
  it('alerts a persistent stall but restarts and fails over nothing until resumed; then the ladder goes on', () => {
    let state = withMaintenance(emptyWatchdogState(), PAUSED);
    const paused: WatchdogAction[] = [];
    for (let minute = 0; minute < 6; minute++) {
      const v = stalledRun(state, minute);
      state = v.state;
      paused.push(...v.actions);
    }
    expect(kinds(paused)).toEqual(['STALLED']);
    expect(paused[0]).toMatchObject({ kind: 'publish', event: { paused: true } });
    expect(state.nodes['node-1']?.incident?.stage.name).toBe('restart-claimed');

    // Resumed: the claim is older than the verification window, so the next run sends it.
    state = withMaintenance(state, undefined);
    const resumed = stalledRun(state, 6);
    expect(kinds(resumed.actions)).toEqual(['find-restart']);
    state = markRestartSent(resumed.state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 6 * 60_000)!.state;
    const after: WatchdogAction[] = [];
    for (let minute = 7; minute < 10; minute++) {
      const v = stalledRun(state, minute);
      state = v.state;
      after.push(...v.actions.filter((a) => a.kind !== 'verify'));
    }
    expect(kinds(after)).toEqual(['STILL_STALLED', 'FAILOVER_STARTED', 'failover']);
    expect(after[0]).toMatchObject({ kind: 'publish', event: { kind: 'STILL_STALLED' } });
    expect('paused' in (after[0] as { event: object }).event).toBe(false);
  });

  it('holds a due failover back while paused, and says why once', () => {
    let state = emptyWatchdogState();
    state = stalledRun(state, 0).state;
    state = markRestartSent(state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 1000)!.state;
    state = withMaintenance(state, PAUSED);
    const held: WatchdogAction[] = [];
    for (let minute = 1; minute < 5; minute++) {
      const v = stalledRun(state, minute);
      state = v.state;
      held.push(...v.actions.filter((a) => a.kind !== 'verify'));
    }
    expect(kinds(held)).toEqual(['STILL_STALLED', 'NO_STANDBY']);
    expect(held[1]).toMatchObject({ event: { paused: true, summary: expect.stringContaining('paused') } });
    const resumed = stalledRun(withMaintenance(state, undefined), 5);
    expect(kinds(resumed.actions).filter((k) => k !== 'verify')).toEqual(['FAILOVER_STARTED', 'failover']);
  });

  it('ends a pause at its expiry by the watchdog clock: stamped at its first run, ended at the first past it', () => {
    // Set with --for 30 s on a laptop whose clock is an hour ahead: its clock is never read.
    const laptop = { ...note, at: T0 + 3_600_000 };
    const expiring: Maintenance = { paused: { ...laptop, forMs: 30_000, until: null }, cordoned: {} };
    let state = stalledRun(withMaintenance(emptyWatchdogState(), expiring), 0).state;
    expect(state.maintenance?.paused?.until).toBe(T0 + 30_000);
    expect(isPaused(state.maintenance)).toBe(true);
    expect(settlePause(state.maintenance, T0 + 29_999)).toBe(state.maintenance);
    expect(settlePause(state.maintenance, T0 + 30_000)?.paused).toBeNull();
    // The run a minute on ends it and stores that; the claim held meanwhile is sent once overdue.
    state = stalledRun(state, 1).state;
    expect(state.maintenance?.paused).toBeNull();
    expect(kinds(stalledRun(state, 6).actions)).toEqual(['find-restart']);
  });

  it('closes an incident whose restart the pause held unsent once the node recovers: nothing is sent after', () => {
    let state = stalledRun(withMaintenance(emptyWatchdogState(), PAUSED), 0).state;
    expect(state.nodes['node-1']?.incident?.stage.name).toBe('restart-claimed');
    const healthy = (minute: number) =>
      judgeAlive(
        state,
        leader,
        beats(heartbeat('node-1', working(minute * 4, 9)), standby(minute * 4 + 8)),
        T0 + minute * 60_000,
        settings,
      );
    const all: WatchdogAction[] = [];
    for (let minute = 1; minute < 4; minute++) {
      const v = healthy(minute);
      state = v.state;
      all.push(...v.actions);
    }
    expect(kinds(all)).toEqual(['RECOVERED']);
    state = withMaintenance(state, undefined);
    expect(kinds(healthy(4).actions)).toEqual([]);
  });
});

describe('maintenance: cordon', () => {
  const CORDONED: Maintenance = { paused: null, cordoned: { 'node-2': note } };

  it('raises no incident for a cordoned standby that goes silent, and restarts nothing', () => {
    let state = withMaintenance(emptyWatchdogState(), CORDONED);
    const hb = heartbeat('node-1', working(0, 9));
    const all: WatchdogAction[] = [];
    state = judgeAlive(state, leader, beats(hb, standby(8)), T0, settings).state;
    // node-2 reboots: nothing new from it for ten minutes, then a new boot.
    for (let minute = 1; minute <= 10; minute++) {
      const v = judgeAlive(
        state,
        leader,
        beats(heartbeat('node-1', working(minute * 4, 9)), standby(8)),
        T0 + minute * 60_000,
        settings,
      );
      state = v.state;
      all.push(...v.actions);
    }
    expect(kinds(all)).toEqual([]);
    // The same silence without the cordon is a lost standby.
    const uncordoned = withMaintenance(state, undefined);
    const v = judgeAlive(
      uncordoned,
      leader,
      beats(heartbeat('node-1', working(44, 9)), standby(8)),
      T0 + 11 * 60_000,
      settings,
    );
    expect(kinds(v.actions)).toEqual(['REDUNDANCY_LOST', 'command']);
  });

  it('never fails over to a cordoned standby, however ready', () => {
    let state = withMaintenance(emptyWatchdogState(), CORDONED);
    state = stalledRun(state, 0).state;
    state = markRestartSent(state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 1000)!.state;
    const actions: WatchdogAction[] = [];
    for (let minute = 1; minute < 5; minute++) {
      const v = stalledRun(state, minute);
      state = v.state;
      actions.push(...v.actions.filter((a) => a.kind !== 'verify'));
    }
    expect(kinds(actions)).toEqual(['STILL_STALLED', 'NO_STANDBY']);
  });
});

describe('maintenance: the promotion rule', () => {
  const change = fc.oneof(
    fc.record({ kind: fc.constant('pause' as const), note: fc.constant(note), forMs: fc.option(fc.nat()) }),
    fc.constant({ kind: 'resume' as const }),
    fc.record({
      kind: fc.constant('cordon' as const),
      node: fc.constantFrom('node-1', 'node-2'),
      note: fc.constant(note),
    }),
    fc.record({ kind: fc.constant('uncordon' as const), node: fc.constantFrom('node-1', 'node-2') }),
  );

  it('holds a node back exactly while it is cordoned or the fleet is paused, after any changes', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 12 }), (changes: MaintenanceChange[]) => {
        const m = changes.reduce<Maintenance | undefined>(applyChange, undefined);
        const cordon = changes.findLast((c) => (c.kind === 'cordon' || c.kind === 'uncordon') && c.node === 'node-2');
        const pause = changes.findLast((c) => c.kind === 'pause' || c.kind === 'resume');
        const expected = cordon?.kind === 'cordon' || pause?.kind === 'pause';
        expect(promotionHeld(m, 'node-2') !== null).toBe(expected);
      }),
    );
  });
});
