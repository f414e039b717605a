import fc from 'fast-check';
import { judgeAlive } from '../../../helpers/judge';
import { readyStandbys } from '../../../../lib/core/fleet/readiness';
import type { Heartbeat, Sample } from '../../../../lib/core/schemas';
import { markRestartResult, markRestartSent } from '../../../../lib/core/fleet/outcomes';
import type { WatchdogAction } from '../../../../lib/core/fleet/watchdog';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import { heartbeat, NODES, sample, working, leaderOf, watchdogSettings } from '../../../helpers/fixtures';

const settings = watchdogSettings(NODES);
const leader = leaderOf({ epoch: 4, renewals: 9, reason: 't', changedBy: 't' });
const T0 = 1_800_000_000_000;
const INTERVAL = 15_000;

/** `consuming`: a sample it took as primary (a live worker, no self-test); `unproven`: live, none passed yet. */
type Worker = 'ready' | 'stopped' | 'frozen' | 'consuming' | 'unproven';
const standbySample = (seq: number, worker: Worker): Sample =>
  sample(seq, {
    epochSeen: 4,
    consumingEpoch: worker === 'consuming' ? 4 : null,
    workerProcesses: worker === 'stopped' ? 0 : 1,
    proofAgeMs: worker === 'ready' ? 2_000 : worker === 'frozen' ? 400_000 : null,
    ...(worker === 'consuming' ? { mayConsume: true } : {}),
  });
/** node-2's heartbeat after `states.length` samples, one per state. */
const node2 = (states: Worker[]): Heartbeat => ({
  ...heartbeat(
    'node-2',
    states.map((w, i) => standbySample(i, w)),
  ),
  role: 'fenced',
});
const primary = (n: number): Heartbeat => heartbeat('node-1', working(0, n));

const published = (actions: WatchdogAction[]): string[] =>
  actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []));
const commands = (actions: WatchdogAction[]) => actions.flatMap((a) => (a.kind === 'command' ? [a] : []));

/**
 * One round per sample of node-2 (a sample interval apart); the restarts the watchdog sends
 * run and succeed a second later, and the worker is as `states` say.
 */
const run = (states: Worker[], start: WatchdogState = emptyWatchdogState()) => {
  let state = start;
  const events: string[] = [];
  const sent: { at: number; command: string }[] = [];
  for (let n = 1; n <= states.length; n++) {
    const now = T0 + n * INTERVAL;
    const v = judgeAlive(
      state,
      leader,
      new Map([
        ['node-1', primary(n)],
        ['node-2', node2(states.slice(0, n))],
      ]),
      now,
      settings,
    );
    state = v.state;
    events.push(...published(v.actions));
    for (const c of commands(v.actions)) {
      sent.push({ at: now, command: c.command });
      const s = markRestartSent(state, c.node, c.incidentId, `cmd-${n}`, now + 500);
      state = s?.state ?? state;
      events.push(...(s?.event === null || s === null ? [] : [s.event.kind]));
      const r = markRestartResult(state, c.node, c.incidentId, true, 'Success', now + 1_000);
      state = r?.state ?? state;
      events.push(...(r?.event === null || r === null ? [] : [r.event.kind]));
    }
  }
  return { state, events, sent };
};

describe('rejoin: a standby whose worker is not ready is restarted in standby mode', () => {
  it(
    'restarts the worker of a standby that has had none ' + 'for three samples, and closes once its self-test passes',
    () => {
      const { state, events, sent } = run(['ready', 'stopped', 'stopped', 'stopped', 'ready']);
      expect(events).toEqual(['STANDBY_UNREADY', 'RESTART_SENT', 'RESTART_RESULT', 'RECOVERED']);
      expect(sent).toEqual([{ at: T0 + 4 * INTERVAL, command: 'restartWorker' }]);
      expect(state.nodes['node-2']?.incident).toBeNull();
      expect(state.nodes['node-2']?.rejoinTimes).toEqual([T0 + 4 * INTERVAL]);
      // The stall budget is untouched: a rejoin is not a stall restart.
      expect(state.nodes['node-2']?.restartTimes).toEqual([]);
      expect(
        readyStandbys({
          nodes: NODES,
          watches: state.nodes,
          heartbeats: new Map([['node-2', node2(['ready'])]]),
          leader,
          now: T0 + 5 * INTERVAL,
          sampleMs: INTERVAL,
          lostMs: 8 * INTERVAL,
          unready: new Set(),
        }).map((n) => n.name),
      ).toEqual(['node-2']);
    },
  );

  it('gives a worker that just started or stopped consuming two intervals to pass its first self-test', () => {
    expect(run(['ready', 'stopped', 'frozen', 'ready', 'frozen', 'frozen', 'ready']).events).toEqual([]);
  });

  it('gives an old primary whose live worker stopped consuming (a switchover) its own samples to prove itself', () => {
    expect(run(['consuming', 'consuming', 'unproven', 'unproven', 'ready']).events).toEqual([]);
    // Three samples of its own without a self-test: restarted, as any standby.
    expect(run(['consuming', 'unproven', 'unproven', 'unproven']).events[0]).toBe('STANDBY_UNREADY');
    // A worker stopped for a failover is restarted as soon as before.
    expect(run(['consuming', 'consuming', 'stopped']).sent).toEqual([
      { at: T0 + 3 * INTERVAL, command: 'restartWorker' },
    ]);
  });

  it('never restarts the primary to rejoin, nor counts a standby with an unready worker as ready', () => {
    const { state } = run(['frozen', 'frozen']);
    expect(
      readyStandbys({
        nodes: NODES,
        watches: state.nodes,
        heartbeats: new Map([['node-2', node2(['frozen', 'frozen'])]]),
        leader,
        now: T0 + 2 * INTERVAL,
        sampleMs: INTERVAL,
        lostMs: 8 * INTERVAL,
        unready: new Set(),
      }),
    ).toEqual([]);
    const primaryStopped = judgeAlive(
      emptyWatchdogState(),
      leader,
      new Map([
        [
          'node-1',
          heartbeat(
            'node-1',
            [0, 1, 2, 3].map((i) => sample(i, { workerProcesses: 0, consumingEpoch: null, proofAgeMs: null })),
          ),
        ],
      ]),
      T0,
      settings,
    );
    expect(published(primaryStopped.actions)).not.toContain('STANDBY_UNREADY');
    // An old primary whose agent has not yet found its lease lost:
    // a worker started now could consume beside the new primary.
    const stillLeased = (role: Heartbeat['role'], mayConsume: boolean): Heartbeat => ({
      ...heartbeat(
        'node-2',
        [0, 1, 2, 3].map((i) => standbySample(i, 'stopped')),
      ),
      role,
      samples: [0, 1, 2, 3].map((i) => ({ ...standbySample(i, 'stopped'), mayConsume })),
    });
    for (const hb of [stillLeased('primary', false), stillLeased('fenced', true)]) {
      expect(
        published(
          judgeAlive(
            emptyWatchdogState(),
            leader,
            new Map([
              ['node-1', primary(4)],
              ['node-2', hb],
            ]),
            T0,
            settings,
          ).actions,
        ),
      ).toEqual([]);
    }
    expect(
      published(
        judgeAlive(
          emptyWatchdogState(),
          leader,
          new Map([
            ['node-1', primary(4)],
            ['node-2', stillLeased('fenced', false)],
          ]),
          T0,
          settings,
        ).actions,
      ),
    ).toEqual(['STANDBY_UNREADY']);
  });

  it(
    'keeps a worker that still fails out with REJOIN_FAILED, ' +
      'tries again within the budget, then stays out quietly until the hour has room',
    () => {
      const { events, sent, state } = run(Array.from({ length: 40 }, () => 'frozen' as const));
      expect(sent).toHaveLength(3);
      expect(events.filter((e) => e === 'STANDBY_UNREADY')).toHaveLength(3);
      expect(events.filter((e) => e === 'REJOIN_FAILED')).toHaveLength(3);
      // The last REJOIN_FAILED said the budget is spent; nothing more is said or done within the hour.
      expect(events.at(-1)).toBe('REJOIN_FAILED');
      expect(state.nodes['node-2']?.incident).toBeNull();
      // Each attempt waits PROOF_INTERVALS intervals after its restart before it is judged failed.
      expect(sent[1].at - sent[0].at).toBeGreaterThanOrEqual(4 * INTERVAL);
    },
  );

  it('sends at most the budget of rejoin restarts in any hour, whatever the worker does (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Worker>('ready', 'stopped', 'frozen'), { minLength: 1, maxLength: 400 }),
        (states) => {
          const { sent, state } = run(states);
          for (const s of sent)
            expect(sent.filter((o) => o.at >= s.at && o.at - s.at < 3_600_000).length).toBeLessThanOrEqual(
              settings.restartBudgetPerHour,
            );
          // A standby whose worker is ready now has no rejoin open once judged again.
          if (states.at(-1) === 'ready' && states.at(-2) === 'ready')
            expect(state.nodes['node-2']?.incident ?? null).toBeNull();
        },
      ),
      { numRuns: 200 },
    );
  });
});
