import { next, outstandingRestart } from '../../../../lib/core/fleet/incident-pending';
import { judge } from '../../../helpers/judge';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import { markRestartSent } from '../../../../lib/core/fleet/outcomes';
import { watchdogStateSchema } from '../../../../lib/core/fleet/watchdog-state';
import { upgradeIncident, type IncidentV1 } from '../../../../lib/core/fleet/watchdog-state-v1';
import type { Leader } from '../../../../lib/core/schemas';
import { frozen, heartbeat, NODES, watchdogSettings, working } from '../../../helpers/fixtures';

const timing = { restartVerifyMs: 60_000 };
const KINDS = ['stall', 'dead', 'agent', 'standby'] as const;
const RESTARTS = [null, 'claimed', 'sent', 'succeeded', 'failed', 'budget'] as const;
const FAILOVERS = [null, 'claimed', 'done', 'failed'] as const;

/** Every version-1 incident: each kind with every restart, failover and flag the old fields allowed. */
const everyV1 = (): IncidentV1[] => {
  const all: IncidentV1[] = [];
  for (const kind of KINDS)
    for (const restart of RESTARTS)
      for (const failover of FAILOVERS)
        for (const escalated of [false, true])
          for (const noStandbyAlerted of [false, true])
            for (const confirmed of [undefined, false, true])
              all.push({
                id: 'node-1-e3-i2',
                kind,
                openedAt: 100,
                epoch: 3,
                restart:
                  restart === null
                    ? null
                    : restart === 'budget'
                      ? {
                          command: 'restartWorker',
                          status: 'failed',
                          claimedAt: 110,
                          detail: 'restart budget exhausted',
                        }
                      : {
                          command: kind === 'stall' ? 'restartWorker' : 'restartAgent',
                          status: restart,
                          claimedAt: 110,
                          ...(restart === 'claimed' ? {} : { commandId: 'cmd-1', sentAt: 111 }),
                          ...(restart === 'succeeded' || restart === 'failed' ? { finishedAt: 120, detail: 'x' } : {}),
                        },
                escalated,
                failover:
                  failover === null
                    ? null
                    : {
                        status: failover,
                        to: 'node-2',
                        fromEpoch: 3,
                        claimedAt: 130,
                        outgoingStopped: false,
                        stopOutgoing: true,
                        ...(failover === 'failed' ? { finishedAt: 140, detail: 'superseded' } : {}),
                        ...(failover === 'done' ? { toEpoch: 4 } : {}),
                      },
                noStandbyAlerted,
                ...(confirmed === undefined ? {} : { confirmed }),
              });
  return all;
};

const v1State = (incident: IncidentV1 | null) => ({
  version: 1,
  revision: 9,
  lastFailoverAt: 50,
  origin: { primary: 'node-1', epoch: 3 },
  nodes: { 'node-1': { counter: emptyCounter(), incident, restartTimes: [110], incidents: 2, seen: null } },
});

describe('watchdog/state.json version 1 → 2', () => {
  const all = everyV1();

  it('reads every version-1 incident as a version-2 state that keeps what the ladder needs', () => {
    expect(all.length).toBe(4 * 6 * 4 * 2 * 2 * 3);
    for (const v1 of all) {
      const state = watchdogStateSchema.parse(JSON.parse(JSON.stringify(v1State(v1))));
      expect(state).toMatchObject({
        version: 2,
        revision: 9,
        lastFailoverAt: 50,
        origin: { primary: 'node-1', epoch: 3 },
      });
      const watch = state.nodes['node-1'];
      expect(watch).toMatchObject({ restartTimes: [110], incidents: 2 });
      const i = watch?.incident;
      if (i === null || i === undefined) throw new Error('the open incident was lost');
      // The incident stays open under the same id, so its next events keep their ids.
      expect(i).toMatchObject({ id: v1.id, epoch: 3, openedAt: 100, kind: v1.kind === 'agent' ? 'standby' : v1.kind });
      const pending = next(i, timing, 1_000);
      const outstanding = v1.restart?.status === 'sent' && v1.failover === null;
      if (v1.failover?.status === 'claimed' || v1.failover?.status === 'done') {
        // A claimed failover is resumed (every step is idempotent), to the same node from the same epoch.
        expect(pending).toEqual({
          kind: 'carry-out-failover',
          failover: { to: 'node-2', fromEpoch: 3, claimedAt: 130, outgoingStopped: false, stopOutgoing: true },
        });
      } else if (v1.failover?.status === 'failed') {
        expect(pending).toMatchObject({ kind: 'retry-failover', detail: 'superseded' });
      } else if (v1.kind === 'dead') {
        // Confirmed gone, or already looking for a standby (files from before `confirmed` existed).
        const dead = v1.confirmed === true || v1.noStandbyAlerted;
        expect(pending).toEqual(
          dead
            ? { kind: 'choose-standby', noStandbyAlerted: v1.noStandbyAlerted }
            : { kind: 'none', why: expect.any(String) as string },
        );
      } else if (v1.kind === 'stall' && v1.escalated) {
        // Escalated: the failover is wanted, and a NO_STANDBY already sent is not sent again.
        expect(pending).toEqual({ kind: 'choose-standby', noStandbyAlerted: v1.noStandbyAlerted });
      } else if (v1.restart?.status === 'claimed') {
        expect(pending).toMatchObject({ kind: 'send-restart', claimedAt: 110 });
      } else if (outstanding) {
        expect(pending).toEqual({ kind: 'verify-restart', commandId: 'cmd-1', deadline: 111 + 60_000 });
      } else if (v1.restart?.status === 'failed' && v1.kind === 'stall') {
        expect(pending).toEqual({ kind: 'choose-standby', noStandbyAlerted: v1.noStandbyAlerted });
        expect(i.stage).toMatchObject({
          why: v1.restart.detail === 'restart budget exhausted' ? 'budget' : 'restart-failed',
        });
      } else {
        expect(pending.kind).toBe('none');
      }
      // A restart sent and never resolved is still read, whatever the stage: its result gets recorded.
      if (v1.restart?.status === 'sent') expect(i.restart).toMatchObject({ commandId: 'cmd-1', sentAt: 111 });
      if (v1.restart?.status === 'sent') expect(i.restart?.finishedAt).toBeUndefined();
      if (v1.restart?.status === 'succeeded' || v1.restart?.status === 'failed')
        expect(i.restart?.finishedAt).toBeDefined();
    }
  });

  it('records a restart the old release claimed before escalating, when its send is reported after the upgrade', () => {
    const claimed = all.find(
      (i) => i.kind === 'stall' && i.restart?.status === 'claimed' && i.failover === null && i.escalated,
    );
    if (claimed === undefined) throw new Error('no such combination');
    const state = watchdogStateSchema.parse(v1State(claimed));
    const sent = markRestartSent(state, 'node-1', claimed.id, 'cmd-9', 500);
    expect(sent?.event?.kind).toBe('RESTART_SENT');
    const incident = sent?.state.nodes['node-1']?.incident;
    expect(incident?.stage.name).toBe('escalating');
    // And its result is read from then on, as for any restart sent before escalation.
    expect(incident === null || incident === undefined ? null : outstandingRestart(incident, timing)).toEqual({
      kind: 'verify-restart',
      commandId: 'cmd-9',
      deadline: 500 + 60_000,
    });
  });

  it('reads a version-1 state with no incident, and a version-2 state unchanged', () => {
    const v2 = watchdogStateSchema.parse(v1State(null));
    const v1 = v1State(null);
    expect(v2).toEqual({
      ...v1,
      version: 2,
      judgedAt: null,
      nodes: Object.fromEntries(
        Object.entries(v1.nodes).map(([n, w]) => [
          n,
          {
            counter: w.counter,
            incident: w.incident,
            restartTimes: w.restartTimes,
            incidents: w.incidents,
            rejoinTimes: [],
            newest: null,
          },
        ]),
      ),
    });
    expect(watchdogStateSchema.parse(JSON.parse(JSON.stringify(v2)))).toEqual(v2);
  });

  it('carries an incident open across the upgrade on to its end: a restart sent by the old release recovers', () => {
    const leader: Leader = {
      version: 1,
      primary: 'node-1',
      epoch: 3,
      renewals: 0,
      reason: 't',
      changedBy: 't',
      previous: null,
      handover: 'immediate',
    };
    const sent = all.find(
      (i) =>
        i.kind === 'stall' &&
        i.restart?.status === 'sent' &&
        i.failover === null &&
        !i.escalated &&
        !i.noStandbyAlerted &&
        i.confirmed === undefined,
    );
    if (sent === undefined) throw new Error('no such combination');
    const state = watchdogStateSchema.parse(v1State(sent));
    const settings = watchdogSettings(NODES);
    const healthy = heartbeat(
      'node-1',
      [...frozen(0, 9), ...working(9, 3)].map((s) => ({ ...s, epochSeen: 3 })),
    );
    const v = judge(state, leader, new Map([['node-1', healthy]]), 200_000, settings);
    const events = v.actions.flatMap((a) => (a.kind === 'publish' ? [a.event.id] : []));
    expect(events).toEqual(['node-1-e3-i2.RECOVERED']);
    expect(v.state).toMatchObject({ version: 2, nodes: { 'node-1': { incident: null } } });
  });

  it('upgrades one incident on its own, as the converter of the whole file does', () => {
    expect(
      upgradeIncident({
        id: 'a',
        kind: 'agent',
        openedAt: 1,
        epoch: 1,
        restart: null,
        escalated: false,
        failover: null,
        noStandbyAlerted: false,
      }),
    ).toEqual({
      id: 'a',
      kind: 'standby',
      openedAt: 1,
      epoch: 1,
      stage: { name: 'watching' },
      restart: null,
    });
  });
});
