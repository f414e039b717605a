import { SendCommandCommand } from '@aws-sdk/client-ssm';
import fc from 'fast-check';
import { handler, resetForTests } from '../../../../functions/replay/handler';
import { EVENT_KINDS, type EventKind } from '../../../../lib/core/events';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import {
  ESCALATIONS,
  INCIDENT_KINDS,
  type FailoverPlan,
  type Incident,
  type IncidentKind,
  type RestartRecord,
  type Stage,
} from '../../../../lib/core/fleet/incident';
import { makeEvent } from '../../../../lib/core/fleet/watchdog-events';
import {
  answerControlPlane,
  mockControlPlane,
  mutations as mutationsOf,
  routedFleetEnv,
} from '../../../helpers/control-plane';
import { frozen, heartbeat, working } from '../../../helpers/fixtures';
import { MemoryS3 } from '../../../helpers/memory-s3';

/**
 * The invariants (docs/architecture.md): a replay dry run changes nothing (6), and every action is idempotent per
 * (incident, epoch) (5). Checked over arbitrary incident records, event histories and epochs,
 * not only the states the examples in tests/functions/replay.test.ts pick.
 */
const INCIDENT = 'node-1-e3-i1';
const cp = mockControlPlane();
const { ssm } = cp;
let s3: MemoryS3;

interface World {
  leader: { primary: 'node-1' | 'node-2'; epoch: number };
  incident: Incident | null;
  written: EventKind[];
  eventKind: EventKind;
}

/** Claims left long ago by a dead invocation, and claims the watchdog is carrying out now. */
const claimedAtArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 1000 }), weight: 3 },
  { arbitrary: fc.constant(Date.now()), weight: 1 },
);
const restartArb: fc.Arbitrary<RestartRecord | null> = fc.option(
  fc.record(
    {
      command: fc.constantFrom('restartWorker' as const, 'restartAgent' as const),
      claimedAt: claimedAtArb,
      commandId: fc.constantFrom('cmd-a', 'cmd-b'),
      sentAt: fc.integer({ min: 1, max: 1000 }),
      finishedAt: fc.integer({ min: 1, max: 1000 }),
    },
    { requiredKeys: ['command', 'claimedAt'] },
  ),
  { nil: null },
);
const planArb = (epoch: number): fc.Arbitrary<FailoverPlan> =>
  fc.record({
    to: fc.constant('node-2'),
    fromEpoch: fc.constant(epoch),
    claimedAt: claimedAtArb,
    outgoingStopped: fc.boolean(),
    stopOutgoing: fc.boolean(),
  });
const stageArb = (epoch: number): fc.Arbitrary<Stage> =>
  // Weighted toward the stages a replay resumes, so that many executes do act.
  fc.oneof(
    fc.constantFrom<Stage>(
      { name: 'restart-claimed' },
      { name: 'restart-sent' },
      { name: 'watching' },
      { name: 'silent' },
    ),
    fc.record({
      name: fc.constant('escalating' as const),
      why: fc.constantFrom(...ESCALATIONS),
      noStandbyAlerted: fc.boolean(),
    }),
    {
      arbitrary: fc.record({ name: fc.constant('failing-over' as const), failover: planArb(epoch) }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        name: fc.constant('failover-failed' as const),
        failover: planArb(epoch),
        detail: fc.constant('boom'),
        finishedAt: fc.constant(1),
      }),
      weight: 3,
    },
  );

const worldArb: fc.Arbitrary<World> = fc
  .record({
    epoch: fc.constant(3),
    // Mostly the incident's own epoch, where an execute may act; sometimes older or newer.
    leaderEpoch: fc.oneof(
      { arbitrary: fc.constant(3), weight: 3 },
      { arbitrary: fc.integer({ min: 2, max: 5 }), weight: 1 },
    ),
    primary: fc.oneof(
      { arbitrary: fc.constant('node-1' as const), weight: 3 },
      { arbitrary: fc.constant('node-2' as const), weight: 1 },
    ),
    // Mostly open, since only an open incident gives an execute anything to do.
    open: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
  })
  .chain(({ epoch, leaderEpoch, primary, open }) =>
    fc.record({
      leader: fc.constant({ primary, epoch: leaderEpoch }),
      incident: open
        ? fc.record({
            id: fc.constant(INCIDENT),
            // Mostly the kinds that fail over; the others too, in stages they never reach.
            kind: fc.oneof(
              { arbitrary: fc.constantFrom<IncidentKind>('stall', 'dead'), weight: 3 },
              { arbitrary: fc.constantFrom(...INCIDENT_KINDS), weight: 1 },
            ),
            openedAt: fc.constant(1),
            epoch: fc.constant(epoch),
            stage: stageArb(epoch),
            restart: restartArb,
          })
        : fc.constant(null),
      written: fc.subarray([...EVENT_KINDS]),
      eventKind: fc.constantFrom<EventKind>(
        'STALLED',
        'NODE_DEAD',
        'AGENT_DEAD',
        'STILL_STALLED',
        'FAILOVER_STARTED',
        'FAILOVER_FAILED',
        'RESTART_SENT',
      ),
    }),
  );

const setUp = (world: World): void => {
  answerControlPlane(cp, { instance: 'running', ping: [] });
  s3.mock.reset();
  s3.objects.clear();
  s3.install();
  const { primary, epoch } = world.leader;
  s3.set('peer-sync/leader.json', {
    version: 1,
    primary,
    epoch,
    renewals: 1,
    reason: 't',
    changedBy: 't',
    previous: null,
    handover: 'immediate',
  });
  s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(0, 9, { epochSeen: epoch })));
  s3.set(
    'peer-sync/nodes/node-2/heartbeat.json',
    heartbeat(
      'node-2',
      working(0, 9).map((s) => ({ ...s, epochSeen: epoch, consumingEpoch: null })),
    ),
  );
  const quiet = { counter: emptyCounter(), incident: null, restartTimes: [], incidents: 1, newest: null };
  s3.set('peer-sync/watchdog/state.json', {
    version: 2,
    revision: 1,
    lastFailoverAt: null,
    nodes: { 'node-1': { ...quiet, incident: world.incident }, 'node-2': quiet },
  });
  // Written as the watchdog writes them: failover steps name their target (and the new epoch once promoted).
  const extra = (kind: EventKind): { newPrimary?: string; newEpoch?: number } =>
    kind === 'FAILOVER_STARTED'
      ? { newPrimary: 'node-2' }
      : kind === 'PROMOTED' || kind === 'RECORD_CHANGED'
        ? { newPrimary: 'node-2', newEpoch: 4 }
        : {};
  // A promotion to node-2 at epoch 4 was written only if the record says so now, or moved on
  // since: epoch 4 cannot have had another primary.
  const promotedTo4 = world.leader.epoch > 4 || (world.leader.epoch === 4 && world.leader.primary === 'node-2');
  const reachable = (kind: EventKind): boolean => (kind !== 'PROMOTED' && kind !== 'RECORD_CHANGED') || promotedTo4;
  for (const kind of new Set([...world.written, world.eventKind].filter(reachable)))
    s3.set(
      `peer-sync/events/${INCIDENT}/${kind}.json`,
      makeEvent(kind, 'node-1', { id: INCIDENT, epoch: 3 }, emptyCounter(), 1, kind, extra(kind)),
    );
  s3.puts = [];
};

const mutations = (): string[] => mutationsOf(s3, cp);
const restarts = (): number =>
  ssm
    .commandCalls(SendCommandCommand)
    .filter((c) => /systemctl restart/.test(c.args[0].input.Parameters?.commands?.[0] ?? '')).length;

describe('runReplay (property)', () => {
  const saved = { ...process.env };
  beforeAll(() => {
    s3 = new MemoryS3();
    Object.assign(process.env, { ...routedFleetEnv(), LOG_LEVEL: 'silent' });
    resetForTests();
  });
  afterAll(() => {
    process.env = saved;
    for (const m of [...cp.all, s3]) m.restore();
  });

  it('changes nothing on a dry run, whatever the state', async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, async (world) => {
        setUp(world);
        await handler({ eventId: `${INCIDENT}.${world.eventKind}` });
        expect(mutations()).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it(
    'acts at most once per incident however often, ' + 'and concurrently, it is executed, and never on an older epoch',
    async () => {
      let acted = 0;
      await fc.assert(
        fc.asyncProperty(worldArb, async (world) => {
          setUp(world);
          const execute = (): Promise<unknown> => handler({ eventId: `${INCIDENT}.${world.eventKind}`, execute: true });
          await Promise.all([execute(), execute()]);
          await execute();
          if (mutations().length > 0) acted++;
          expect(restarts()).toBeLessThanOrEqual(1);
          expect(s3.puts.filter((p) => p.key === 'peer-sync/leader.json').length).toBeLessThanOrEqual(1);
          const ownFailover = world.written.includes('PROMOTED') || world.eventKind === 'PROMOTED';
          if (world.leader.epoch !== 3 && !(ownFailover && world.leader.epoch === 4)) expect(mutations()).toEqual([]);
          // A claim the watchdog is carrying out is not taken over: no command, no move.
          const stage = world.incident?.stage;
          const inFlight =
            stage?.name === 'failing-over'
              ? stage.failover.claimedAt
              : stage?.name === 'restart-claimed'
                ? (world.incident?.restart?.claimedAt ?? 0)
                : 0;
          if (Date.now() - inFlight < 60_000) expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
        }),
        { numRuns: 150 },
      );
      // The generator must reach states where an execute does act, or the bounds prove nothing. About a
      // third of its worlds act (50 of 150, sd 6), so 10 or fewer is out of reach of chance.
      expect(acted).toBeGreaterThan(10);
    },
    60_000,
  );
});
