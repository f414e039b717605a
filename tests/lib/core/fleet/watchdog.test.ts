import fc from 'fast-check';
import { judgeAlive } from '../../../helpers/judge';
import { markRestartResult, markRestartSent } from '../../../../lib/core/fleet/outcomes';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import type { Heartbeat } from '../../../../lib/core/schemas';
import { frozen, heartbeat, NODES, sample, working, leaderOf, watchdogSettings } from '../../../helpers/fixtures';

const settings = watchdogSettings(NODES);
const leader = leaderOf();
const T0 = 1_800_000_000_000;
const beats = (...hbs: Heartbeat[]): Map<string, Heartbeat> => new Map(hbs.map((h) => [h.node, h]));

const stalledState = (): { state: WatchdogState; kinds: string[] } => {
  const v = judgeAlive(emptyWatchdogState(), leader, beats(heartbeat('node-1', frozen(0, 9))), T0, settings);
  return { state: v.state, kinds: v.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a.kind)) };
};

describe('decide', () => {
  it('opens one incident with an alert and a restart when the primary stalls', () => {
    const { state, kinds } = stalledState();
    expect(kinds).toEqual(['STALLED', 'command']);
    expect(state.nodes['node-1']?.incident).toMatchObject({
      id: 'node-1-e1-i1',
      stage: { name: 'restart-claimed' },
      restart: { command: 'restartWorker', claimedAt: T0 },
    });
    expect(state.nodes['node-1']?.counter.failing).toBe(0);
  });

  it('does nothing twice when the same heartbeat is judged again', () => {
    const { state } = stalledState();
    const again = judgeAlive(state, leader, beats(heartbeat('node-1', frozen(0, 9))), T0 + 1000, settings);
    expect(again.changed).toBe(false);
    expect(again.actions).toEqual([]);
  });

  it('does not judge a standby by the stall rule', () => {
    const v = judgeAlive(emptyWatchdogState(), leader, beats(heartbeat('node-2', frozen(0, 20))), T0, settings);
    expect(v.actions).toEqual([]);
    expect(v.state.nodes['node-2']?.counter).toMatchObject({ boot: 'boot-1', failing: 0 });
  });

  it('alerts RECOVERED once after the restart was sent and samples turn healthy', () => {
    const { state } = stalledState();
    const sent = markRestartSent(state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 100);
    expect(sent?.event?.kind).toBe('RESTART_SENT');
    const v = judgeAlive(
      sent!.state,
      leader,
      beats(heartbeat('node-1', [...frozen(0, 9), ...working(9, 3)])),
      T0 + 5000,
      settings,
    );
    const published = v.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []));
    expect(published).toEqual(['RECOVERED']);
    expect(v.state.nodes['node-1']?.incident).toBeNull();
  });

  describe('recovery after a restart counts only the restarted worker (CI runs 11 and 12)', () => {
    const of = (worker: string, samples: ReturnType<typeof frozen>) => samples.map((s) => ({ ...s, worker }));
    const stalledBy = (worker: string) => {
      const v = judgeAlive(
        emptyWatchdogState(),
        leader,
        beats(heartbeat('node-1', of(worker, frozen(0, 9)))),
        T0,
        settings,
      );
      expect(v.state.nodes['node-1']?.incident?.restart).toMatchObject({ worker });
      return markRestartSent(v.state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 100)!.state;
    };
    const kinds = (v: ReturnType<typeof judgeAlive>) =>
      v.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []));

    it('does not take a stage the stalled worker finishes while it drains for recovery', () => {
      const sent = stalledBy('101:5000');
      // The stopped worker, drained by the restart, advances its task for a few samples.
      const draining = judgeAlive(
        sent,
        leader,
        beats(heartbeat('node-1', [...of('101:5000', frozen(0, 9)), ...of('101:5000', working(9, 4))])),
        T0 + 60_000,
        settings,
      );
      expect(kinds(draining)).not.toContain('RECOVERED');
      expect(draining.state.nodes['node-1']?.incident).not.toBeNull();
      // Its replacement's first healthy sample starts a run of its own: one is not enough.
      const first = judgeAlive(
        draining.state,
        leader,
        beats(heartbeat('node-1', [...of('101:5000', working(0, 13)), ...of('202:9000', working(13, 1))])),
        T0 + 75_000,
        settings,
      );
      expect(kinds(first)).toEqual([]);
      const second = judgeAlive(
        first.state,
        leader,
        beats(heartbeat('node-1', [...of('101:5000', working(0, 13)), ...of('202:9000', working(13, 2))])),
        T0 + 90_000,
        settings,
      );
      expect(kinds(second)).toEqual(['RECOVERED']);
    });

    it('still escalates when the replacement stalls in turn, whatever the old worker did on its way out', () => {
      const sent = stalledBy('101:5000');
      const hb = heartbeat('node-1', [
        ...of('101:5000', frozen(0, 9)),
        ...of('101:5000', working(9, 3)),
        ...of('202:9000', frozen(12, 8)),
      ]);
      expect(kinds(judgeAlive(sent, leader, beats(hb), T0 + 150_000, settings))).toEqual([
        'STILL_STALLED',
        'NO_STANDBY',
      ]);
    });

    it('counts the old worker again once its restart failed: it was never replaced', () => {
      const failed = markRestartResult(
        stalledBy('101:5000'),
        'node-1',
        'node-1-e1-i1',
        false,
        'Failed',
        T0 + 2000,
      )!.state;
      const v = judgeAlive(
        failed,
        leader,
        beats(heartbeat('node-1', [...of('101:5000', frozen(0, 9)), ...of('101:5000', working(9, 3))])),
        T0 + 60_000,
        settings,
      );
      expect(kinds(v)).toEqual(['RECOVERED']);
    });

    it("never closes the incident on the stalled worker's own samples, in any order of progress and pauses", () => {
      fc.assert(
        fc.property(
          fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
          fc.integer({ min: 1, max: 5 }),
          (steps, perRound) => {
            let state = stalledBy('101:5000');
            let samples = of('101:5000', frozen(0, 9));
            for (let i = 0; i < steps.length; i += perRound) {
              for (const moves of steps.slice(i, i + perRound)) {
                const seq = samples.length;
                samples = [...samples, { ...(moves ? working(seq, 1)[0] : frozen(seq, 1)[0]), worker: '101:5000' }];
              }
              const v = judgeAlive(
                state,
                leader,
                beats(heartbeat('node-1', samples.slice(-200))),
                T0 + 1000 * (i + 1),
                settings,
              );
              if (kinds(v).includes('RECOVERED')) return false;
              state = v.state;
            }
            return state.nodes['node-1']?.incident !== null;
          },
        ),
      );
    });
  });

  it('escalates once when the node stays stalled a full window after its restart', () => {
    const { state } = stalledState();
    const sent = markRestartSent(state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 100)!.state;
    const v = judgeAlive(sent, leader, beats(heartbeat('node-1', frozen(0, 17))), T0 + 130_000, settings);
    expect(v.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []))).toEqual([
      'STILL_STALLED',
      'NO_STANDBY',
    ]);
    const again = judgeAlive(v.state, leader, beats(heartbeat('node-1', frozen(0, 25))), T0 + 250_000, settings);
    expect(again.actions.filter((a) => a.kind === 'publish')).toEqual([]);
  });

  it('refuses a restart beyond the hourly budget and says so', () => {
    const budget = { ...settings, restartBudgetPerHour: 0 };
    const v = judgeAlive(emptyWatchdogState(), leader, beats(heartbeat('node-1', frozen(0, 9))), T0, budget);
    expect(v.actions.map((a) => (a.kind === 'publish' ? a.event.kind : a.kind))).toEqual([
      'STALLED',
      'RESTART_BUDGET_EXHAUSTED',
    ]);
  });

  it('wants a failover when the budget is spent, without claiming a restart that never ran', () => {
    const budget = { ...settings, restartBudgetPerHour: 0 };
    const first = judgeAlive(emptyWatchdogState(), leader, beats(heartbeat('node-1', frozen(0, 9))), T0, budget);
    expect(first.state.nodes['node-1']?.incident?.stage).toEqual({
      name: 'escalating',
      why: 'budget',
      noStandbyAlerted: false,
    });
    const v = judgeAlive(first.state, leader, beats(heartbeat('node-1', frozen(0, 10))), T0 + 15_000, budget);
    expect(v.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []))).toEqual(['NO_STANDBY']);
  });

  it(
    'asks SSM about a restart claimed but never recorded as sent, ' +
      'after the verify window; one that could not be sent failed',
    () => {
      const { state } = stalledState();
      const v = judgeAlive(state, leader, beats(heartbeat('node-1', frozen(0, 10))), T0 + 61_000, settings);
      expect(v.actions).toEqual([
        {
          kind: 'find-restart',
          node: 'node-1',
          instanceId: 'mi-00000000000000001',
          incidentId: 'node-1-e1-i1',
          command: 'restartWorker',
        },
      ]);
      const failed = markRestartResult(
        state,
        'node-1',
        'node-1-e1-i1',
        false,
        'restart claimed but never sent',
        T0 + 61_500,
      );
      expect(failed?.event?.kind).toBe('RESTART_FAILED');
      const after = judgeAlive(failed!.state, leader, beats(heartbeat('node-1', frozen(0, 11))), T0 + 76_000, settings);
      expect(after.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.kind] : []))).toEqual(['NO_STANDBY']);
    },
  );

  it(
    'claims the search for an unsent restart anew: ' +
      'a second run on the written state does not search (and send) too',
    () => {
      const { state } = stalledState();
      const first = judgeAlive(state, leader, beats(heartbeat('node-1', frozen(0, 10))), T0 + 61_000, settings);
      expect(first.actions.map((a) => a.kind)).toEqual(['find-restart']);
      // A run that read the state the first one wrote: the claim is fresh, nothing to do yet.
      const second = judgeAlive(first.state, leader, beats(heartbeat('node-1', frozen(0, 10))), T0 + 62_000, settings);
      expect(second.actions.filter((a) => a.kind === 'find-restart' || a.kind === 'command')).toEqual([]);
      // Once that claim is overdue in turn (the first run died too), the next run searches again.
      const later = judgeAlive(second.state, leader, beats(heartbeat('node-1', frozen(0, 14))), T0 + 122_000, settings);
      expect(later.actions.map((a) => a.kind)).toContain('find-restart');
    },
  );

  it('asks to verify a sent restart until its result is recorded', () => {
    const { state } = stalledState();
    const sent = markRestartSent(state, 'node-1', 'node-1-e1-i1', 'cmd-1', T0 + 100)!.state;
    const v = judgeAlive(sent, leader, beats(heartbeat('node-1', frozen(0, 10))), T0 + 1000, settings);
    expect(v.actions).toEqual([
      expect.objectContaining({ kind: 'verify', commandId: 'cmd-1', deadline: T0 + 100 + 60_000 }),
    ]);
    const done = markRestartResult(sent, 'node-1', 'node-1-e1-i1', true, 'Success', T0 + 2000);
    expect(done?.event?.kind).toBe('RESTART_RESULT');
    expect(markRestartResult(done!.state, 'node-1', 'node-1-e1-i1', true, 'Success', T0 + 3000)).toBeNull();
  });

  it('issues at most one restart per incident whatever the interleaving of heartbeats (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 20 }), (cuts) => {
        let state = emptyWatchdogState();
        let restarts = 0;
        const all = frozen(0, 31);
        cuts.forEach((end, i) => {
          const v = judgeAlive(
            state,
            leader,
            beats(heartbeat('node-1', all.slice(Math.max(0, end - 16), end))),
            T0 + i,
            settings,
          );
          restarts += v.actions.filter((a) => a.kind === 'command').length;
          state = v.state;
        });
        expect(restarts).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('judges nothing without a primary record', () => {
    const v = judgeAlive(emptyWatchdogState(), null, beats(heartbeat('node-1', frozen(0, 9))), T0, settings);
    expect(v.actions).toEqual([]);
  });

  it('keeps a healthy primary quiet', () => {
    const v = judgeAlive(
      emptyWatchdogState(),
      leader,
      beats(heartbeat('node-1', [sample(0), ...working(1, 15)])),
      T0,
      settings,
    );
    expect(v.actions).toEqual([]);
  });
});
