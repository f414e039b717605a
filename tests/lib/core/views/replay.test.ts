import type { EventKind, FleetEvent } from '../../../../lib/core/events';
import { planReplay, type ReplayFacts } from '../../../../lib/core/views/replay';
import type { Leader } from '../../../../lib/core/schemas';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import type { Incident, NodeWatch } from '../../../../lib/core/fleet/watchdog-state';
import { makeEvent } from '../../../../lib/core/fleet/watchdog-events';

const leader = (primary: string, epoch: number): Leader => ({
  version: 1,
  primary,
  epoch,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
});
const watch = (incident: Incident | null): NodeWatch => ({
  counter: emptyCounter(),
  incident,
  restartTimes: [],
  rejoinTimes: [],
  incidents: 1,
  newest: null,
});
const incident = (over: Partial<Incident>): Incident => ({
  id: 'node-1-e3-i1',
  kind: 'dead',
  openedAt: 1,
  epoch: 3,
  stage: { name: 'silent' },
  restart: null,
  ...over,
});
const event = (kind: EventKind, incidentId = 'node-1-e3-i1'): FleetEvent =>
  makeEvent(kind, 'node-1', { id: incidentId, epoch: 3 }, emptyCounter(), 1, kind);
const facts = (over: Partial<ReplayFacts>): ReplayFacts => ({
  event: event('NODE_DEAD'),
  leader: leader('node-1', 3),
  watch: null,
  written: new Set(),
  ready: ['node-2'],
  dns: true,
  restartVerifyMs: 60_000,
  claimStaleMs: 70_000,
  now: 1_000_000,
  ...over,
});

describe('planReplay', () => {
  it('shows a completed dead-node failover as done, with nothing to do', () => {
    const plan = planReplay(
      facts({
        leader: leader('node-2', 4),
        written: new Set(['NODE_DEAD', 'FAILOVER_STARTED', 'PROMOTED', 'RECORD_CHANGED']),
      }),
    );
    expect(plan.steps.map((s) => `${s.step}: ${s.status}`)).toEqual([
      'detect the dead node: done',
      'choose a standby: done',
      'stop the old primary: skipped',
      'promote the standby: done',
      'move traffic: done',
      'close the incident: done',
    ]);
    expect(plan).toMatchObject({ incident: 'dead', verdict: 'nothing-to-do', action: null });
  });

  it('resumes a claimed failover that nobody finished', () => {
    const step = { to: 'node-2', fromEpoch: 3, claimedAt: 5, outgoingStopped: true, stopOutgoing: false } as const;
    const plan = planReplay(
      facts({
        watch: watch(incident({ stage: { name: 'failing-over', failover: step } })),
        written: new Set(['NODE_DEAD', 'FAILOVER_STARTED']),
      }),
    );
    expect(plan).toMatchObject({ open: true, verdict: 'resume', action: { kind: 'resume-failover', step } });
    expect(plan.steps.find((s) => s.step === 'promote the standby')?.status).toBe('pending');
  });

  it('leaves a fresh claim to the watchdog that is carrying it out', () => {
    const step = {
      to: 'node-2',
      fromEpoch: 3,
      claimedAt: 1_000_000 - 20_000,
      outgoingStopped: false,
      stopOutgoing: true,
    } as const;
    const plan = planReplay(
      facts({
        watch: watch(incident({ stage: { name: 'failing-over', failover: step } })),
        written: new Set(['NODE_DEAD', 'FAILOVER_STARTED']),
      }),
    );
    expect(plan).toMatchObject({ verdict: 'watchdog-owns', action: null });
    expect(plan.reason).toBe(
      'the failover to node-2 was claimed 20 s ago and is in flight; a replay may resume it once it is 70 s old',
    );
  });

  it('refuses when leader.json cannot be read: the epoch guard needs it', () => {
    const step = { to: 'node-2', fromEpoch: 3, claimedAt: 5, outgoingStopped: false, stopOutgoing: true } as const;
    expect(
      planReplay(facts({ leader: null, watch: watch(incident({ stage: { name: 'failing-over', failover: step } })) })),
    ).toMatchObject({ verdict: 'refused', action: null });
  });

  it('refuses to retry a failed failover when no standby is ready', () => {
    const failed = { to: 'node-2', fromEpoch: 3, claimedAt: 5, outgoingStopped: false, stopOutgoing: false };
    const plan = planReplay(
      facts({
        ready: [],
        watch: watch(
          incident({ stage: { name: 'failover-failed', failover: failed, detail: 'superseded', finishedAt: 6 } }),
        ),
        written: new Set(['NODE_DEAD', 'FAILOVER_STARTED', 'FAILOVER_FAILED']),
      }),
    );
    expect(plan).toMatchObject({ verdict: 'refused', action: null });
    expect(plan.reason).toMatch(/no standby is ready/);
  });

  it.each<[EventKind, string]>([
    ['POISON_TASK', 'alert'],
    ['MANIFEST_DAMAGED', 'alert'],
  ])('has nothing to replay for a node alert %s', (kind, incidentKind) => {
    const plan = planReplay(facts({ event: event(kind, 'poison-task-0007'), written: new Set([kind]) }));
    expect(plan).toMatchObject({ incident: incidentKind, verdict: 'nothing-to-do', action: null });
  });

  it('refuses an incident of an older epoch even when its state still looks open', () => {
    const plan = planReplay(
      facts({
        leader: leader('node-2', 6),
        watch: watch(
          incident({
            stage: { name: 'restart-claimed' },
            restart: { command: 'restartWorker', claimedAt: 1 },
            kind: 'stall',
          }),
        ),
        written: new Set(['STALLED']),
      }),
    );
    expect(plan).toMatchObject({ verdict: 'refused', action: null });
  });
});
