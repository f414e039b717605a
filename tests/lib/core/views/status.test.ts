import fc from 'fast-check';
import { makeEvent } from '../../../../lib/core/fleet/watchdog-events';
import { readyStandbys } from '../../../../lib/core/fleet/readiness';
import type { HeartbeatObservation, Observed } from '../../../../lib/core/views/observed';
import { isFresh, operatorWatch, readiness, type ReadinessInput } from '../../../../lib/core/views/readiness';
import type { Heartbeat, Leader } from '../../../../lib/core/schemas';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import { buildStatus, type StatusInput } from '../../../../lib/core/views/status';
import { describeRole } from '../../../../lib/core/views/role';
import type { Incident, WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import { heartbeat, NODES, sample } from '../../../helpers/fixtures';

const NOW = 1_800_000_000_000;
const SAMPLE_MS = 15_000;
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
const ok = <T>(value: T): Observed<T> => ({ state: 'ok', value });
const hbOf = (node: string, over: Partial<Heartbeat> = {}, sampleOver = {}): Heartbeat => ({
  ...heartbeat(node, [
    sample(0, { at: NOW - 20_000, epochSeen: 4 }),
    sample(1, { at: NOW - 5_000, epochSeen: 4, ...sampleOver }),
  ]),
  ...over,
});
const seen = (hb: Heartbeat, writtenAt: number | null = NOW - 5_000): HeartbeatObservation => ({
  heartbeat: ok(hb),
  writtenAt,
});
const stall: Incident = {
  id: 'node-1-e4-i1',
  kind: 'stall',
  openedAt: NOW - 60_000,
  epoch: 4,
  stage: { name: 'restart-sent' },
  restart: { command: 'restartWorker', claimedAt: NOW - 59_000, commandId: 'cmd-1', sentAt: NOW - 58_000 },
};
const watchdog = (incidents: Record<string, Incident | null> = {}): WatchdogState => ({
  version: 2,
  revision: 1,
  lastFailoverAt: null,
  judgedAt: null,
  nodes: Object.fromEntries(
    NODES.map((n) => [
      n.name,
      {
        counter: { ...emptyCounter(), failing: 3, healthy: 0, lastFault: 'no-progress' as const },
        incident: incidents[n.name] ?? null,
        restartTimes: [],
        rejoinTimes: [],
        incidents: 0,
        newest: null,
      },
    ]),
  ),
});

const input = (over: Partial<StatusInput> = {}): StatusInput => ({
  nodes: NODES,
  sampleIntervalSeconds: 15,
  heartbeatKeepAliveSeconds: 300,
  leader: ok(leader),
  heartbeats: new Map([
    ['node-1', seen(hbOf('node-1'))],
    ['node-2', seen(hbOf('node-2'))],
  ]),
  strays: [],
  watchdog: ok(watchdog({ 'node-1': stall })),
  queue: { state: 'ok', visible: 3, inFlight: 2 },
  lastEvent: null,
  lastPromotion: null,
  now: NOW,
  ...over,
});

describe('buildStatus', () => {
  it('shows the metrics the watchdog publishes, by its clock and the same rules: what the dashboard shows', () => {
    const state = watchdog({ 'node-1': stall });
    state.nodes['node-1'] = { ...state.nodes['node-1'], newest: { boot: 'b', seq: 1, changedAt: NOW - 12_000 } };
    state.nodes['node-2'] = {
      ...state.nodes['node-2'],
      counter: emptyCounter(),
      newest: { boot: 'b', seq: 1, changedAt: NOW - 4_000 },
    };
    const view = buildStatus(input({ watchdog: ok(state) }));
    // The epoch, the one ready standby, input not held; no counts (they are a run's own).
    expect(view.metrics.fleet).toEqual({ Epoch: 4, ReadyStandbys: 1, InputHeld: 0, Paused: 0 });
    expect(view.metrics.nodes['node-1']).toMatchObject({ HeartbeatAge: 12, FailingSamples: 3, Primary: 1 });
    expect(view.metrics.nodes['node-2']).toMatchObject({ HeartbeatAge: 4, FailingSamples: 0, Primary: 0 });
    // With no watchdog state yet, nothing it would not know: no heartbeat age, no counters.
    const fresh = buildStatus(input({ watchdog: { state: 'missing' } }));
    expect(fresh.metrics.nodes['node-1']).not.toHaveProperty('HeartbeatAge');
    expect(fresh.metrics.nodes['node-1']).not.toHaveProperty('FailingSamples');
  });

  it('shows per node the reported role, heartbeat age, latest metrics, stall counters and open incident', () => {
    const view = buildStatus(input());
    expect(view.nodes[0]).toEqual({
      name: 'node-1',
      zone: null,
      role: 'primary',
      designated: 'primary',
      roleNote: null,
      heartbeat: { state: 'ok', ageSeconds: 5, writtenSecondsAgo: 5, fresh: true, agentVersion: '0.1.0' },
      epochSeen: 4,
      workerProcesses: 1,
      cpuPercent: 3,
      backlog: 5,
      stall: { failing: 3, healthy: 0, fault: 'no-progress' },
      incident: {
        id: 'node-1-e4-i1',
        kind: 'stall',
        openedAt: NOW - 60_000,
        stage: 'restart-sent',
        why: null,
        failoverTo: null,
      },
    });
    expect(view.nodes[1]).toMatchObject({ name: 'node-2', role: 'standby', designated: 'standby', incident: null });
  });

  it('shows the availability zone the configuration gives each node', () => {
    const view = buildStatus(input({ nodes: NODES.map((n, i) => (i === 0 ? { ...n, zone: 'eu-west-2a' } : n)) }));
    expect(view.nodes.map((n) => n.zone)).toEqual(['eu-west-2a', ...NODES.slice(1).map(() => null)]);
  });

  it('shows the primary, epoch and handover from leader.json and the queue depth as visible plus in flight', () => {
    const view = buildStatus(input());
    expect(view.leader).toMatchObject({ state: 'ok', primary: 'node-1', epoch: 4, handover: 'immediate' });
    expect(view.queue).toEqual({ state: 'ok', visible: 3, inFlight: 2, depth: 5 });
    expect(buildStatus(input({ queue: { state: 'not-configured' } })).queue).toEqual({ state: 'not-configured' });
  });

  it('shows a missing and a corrupt heartbeat as such, without metrics', () => {
    const view = buildStatus(
      input({
        heartbeats: new Map([
          ['node-2', { heartbeat: { state: 'corrupt', error: 'boot: expected string' }, writtenAt: NOW }],
        ]),
      }),
    );
    expect(view.nodes[0]).toMatchObject({
      heartbeat: { state: 'missing' },
      role: null,
      designated: 'primary',
      workerProcesses: null,
    });
    expect(view.nodes[1]).toMatchObject({
      heartbeat: { state: 'corrupt', error: 'boot: expected string' },
      role: null,
      epochSeen: null,
    });
  });

  it.each([
    ['missing', { state: 'missing' } as const],
    ['corrupt', { state: 'corrupt', error: 'epoch: too small' } as const],
  ])('reports a %s leader.json and then designates no role', (_, leaderObs) => {
    const view = buildStatus(input({ leader: leaderObs }));
    expect(view.leader).toEqual(leaderObs);
    expect(view.nodes.map((n) => n.designated)).toEqual([null, null]);
  });

  it('reports a corrupt watchdog state and shows no counters or incidents', () => {
    const view = buildStatus(input({ watchdog: { state: 'corrupt', error: 'revision: expected number' } }));
    // A corrupt state is rebuilt without its maintenance, so none is shown.
    expect(view.watchdog).toEqual({
      state: 'corrupt',
      error: 'revision: expected number',
      lastFailoverAt: null,
      maintenance: { paused: null, cordoned: {} },
      paused: false,
    });
    expect(view.nodes[0]).toMatchObject({ stall: null, incident: null });
  });

  it.each([
    [NOW - 329_999, true],
    [NOW - 330_000, false],
    [null, false],
  ])(
    "judges a standby's heartbeat written at %p fresh: %p (rewritten only with news: " +
      'under its keep-alive and two sample intervals by S3 time)',
    (writtenAt, fresh) => {
      const view = buildStatus(input({ heartbeats: new Map([['node-2', seen(hbOf('node-2'), writtenAt)]]) }));
      expect(view.nodes[1]?.heartbeat).toMatchObject({ state: 'ok', fresh });
    },
  );

  it.each([
    [NOW - 329_999, true],
    [NOW - 330_000, false],
  ])(
    "judges a primary's heartbeat written at %p fresh: " +
      '%p (it is rewritten only with news: under its keep-alive and two sample intervals)',
    (writtenAt, fresh) => {
      const view = buildStatus(
        input({ heartbeats: new Map([['node-1', seen(hbOf('node-1', { role: 'primary' }), writtenAt)]]) }),
      );
      expect(view.nodes[0]?.heartbeat).toMatchObject({ state: 'ok', fresh });
    },
  );

  it(
    "judges an old primary's last heartbeat (it still says primary, " +
      'the lease names another) by two sample intervals, as any',
    () => {
      const view = buildStatus(
        input({
          leader: ok({ ...leader, primary: 'node-2', epoch: 5 }),
          heartbeats: new Map([['node-1', seen(hbOf('node-1', { role: 'primary' }), NOW - 60_000)]]),
        }),
      );
      expect(view.nodes[0]?.heartbeat).toMatchObject({ state: 'ok', fresh: false });
    },
  );

  it('names the newest event as the last incident, and a corrupt one by its key', () => {
    const event = makeEvent(
      'STALLED',
      'node-1',
      { id: 'node-1-e4-i1', epoch: 4 },
      emptyCounter(),
      NOW - 1000,
      'node-1 stalled.',
    );
    expect(
      buildStatus(input({ lastEvent: { key: 'events/node-1-e4-i1/STALLED.json', event: ok(event) } })).lastIncident,
    ).toEqual({
      state: 'ok',
      incidentId: 'node-1-e4-i1',
      kind: 'STALLED',
      node: 'node-1',
      epoch: 4,
      at: NOW - 1000,
      summary: 'node-1 stalled.',
    });
    expect(
      buildStatus(input({ lastEvent: { key: 'events/x/STALLED.json', event: { state: 'corrupt', error: 'bad' } } }))
        .lastIncident,
    ).toEqual({ state: 'corrupt', key: 'events/x/STALLED.json', error: 'bad' });
    expect(buildStatus(input()).lastIncident).toEqual({ state: 'none' });
  });

  it('takes the last failover from the newest PROMOTED event and tells a manual one', () => {
    const event = makeEvent(
      'PROMOTED',
      'node-1',
      { id: 'manual-4-1799999999000', epoch: 4 },
      emptyCounter(),
      NOW - 9000,
      'Manual failover.',
      { newPrimary: 'node-2', newEpoch: 5 },
    );
    expect(
      buildStatus(input({ lastPromotion: { key: 'events/manual-4-1799999999000/PROMOTED.json', event: ok(event) } }))
        .lastFailover,
    ).toEqual({
      state: 'ok',
      at: NOW - 9000,
      incidentId: 'manual-4-1799999999000',
      manual: true,
      from: 'node-1',
      newPrimary: 'node-2',
      newEpoch: 5,
    });
  });
});

describe('describeRole', () => {
  it.each([
    ['node-1', 'primary', null],
    ['node-1', 'pending', 'taking over'],
    ['node-1', 'standby', 'leader.json makes it primary of epoch 4; its agent has not synced yet'],
    ['node-2', 'standby', null],
    ['node-2', 'fenced', null],
    [
      'node-2',
      'primary',
      'reports primary, but leader.json names node-1 (epoch 4): it fences itself at its next lease round',
    ],
  ] as const)('%s reporting %s gets the note %p', (node, role, note) => {
    expect(describeRole(node, leader, hbOf(node, { role })).roleNote).toBe(note);
  });
});

describe('readiness', () => {
  const base = (over: Partial<ReadinessInput> = {}): ReadinessInput => ({
    nodes: NODES,
    leader,
    heartbeats: new Map([['node-2', seen(hbOf('node-2'))]]),
    watchdog: ok(watchdog()),
    now: NOW,
    sampleMs: SAMPLE_MS,
    ...over,
  });

  it('finds a standby with a fresh heartbeat, a live worker, the current epoch and no incident ready', () => {
    expect(readiness('node-2', base())).toEqual({ ready: true, reasons: [] });
  });

  it.each([
    ['no heartbeat', { heartbeats: new Map() }, 'it has no heartbeat'],
    [
      'a stale heartbeat',
      { heartbeats: new Map([['node-2', seen(hbOf('node-2'), NOW - 31_000)]]) },
      'its heartbeat was last written 31 s ago (fresh is under 30 s)',
    ],
    [
      'no worker',
      { heartbeats: new Map([['node-2', seen(hbOf('node-2', {}, { workerProcesses: 0 }))]]) },
      'it has no live worker process',
    ],
    [
      'an old epoch',
      { heartbeats: new Map([['node-2', seen(hbOf('node-2', {}, { epochSeen: 3 }))]]) },
      'it has seen epoch 3, the current one is 4',
    ],
    [
      'a frozen worker',
      { heartbeats: new Map([['node-2', seen(hbOf('node-2', {}, { proofAgeMs: 75_000 }))]]) },
      'its worker last passed a self-test 75 s ago (within 60 s is ready)',
    ],
    [
      'a failing worker',
      { heartbeats: new Map([['node-2', seen(hbOf('node-2', {}, { proofAgeMs: null }))]]) },
      'its worker has not passed a self-test',
    ],
    [
      'an open incident',
      { watchdog: ok(watchdog({ 'node-2': { ...stall, id: 'node-2-e4-i1', kind: 'standby' } })) },
      'it has an open incident node-2-e4-i1 (standby)',
    ],
    [
      'a corrupt watchdog state',
      { watchdog: { state: 'corrupt', error: 'x' } as const },
      'watchdog/state.json is corrupt, so an open incident cannot be ruled out',
    ],
  ])('refuses a standby with %s and says so', (_, over, reason) => {
    expect(readiness('node-2', base(over))).toEqual({ ready: false, reasons: [reason] });
  });

  // One deliberate difference: a heartbeat whose write time S3 did not give is not taken for fresh.
  it('agrees with readyStandbys on every combination, and always names a specific reason', () => {
    fc.assert(
      fc.property(
        fc.record({
          role: fc.constantFrom('primary', 'pending', 'standby', 'fenced'),
          workers: fc.integer({ min: 0, max: 2 }),
          epochSeen: fc.integer({ min: 3, max: 5 }),
          writtenAgo: fc.option(fc.integer({ min: 0, max: 60_000 })),
          incident: fc.boolean(),
          present: fc.boolean(),
        }),
        (c) => {
          const hb = hbOf('node-2', { role: c.role }, { workerProcesses: c.workers, epochSeen: c.epochSeen });
          const obs = { heartbeat: ok(hb), writtenAt: c.writtenAgo === null ? null : NOW - c.writtenAgo };
          const state = watchdog({ 'node-2': c.incident ? stall : null });
          const heartbeats = new Map(c.present ? [['node-2', obs]] : []);
          const r = readiness('node-2', base({ heartbeats, watchdog: ok(state) }));
          const watches = { 'node-2': operatorWatch(state.nodes['node-2'], c.present ? obs : undefined) };
          const heard = new Map(c.present ? [['node-2', hb]] : []);
          const standbys = { nodes: NODES, watches, heartbeats: heard, leader, now: NOW, sampleMs: SAMPLE_MS };
          const ruled = readyStandbys({ ...standbys, lostMs: 2 * SAMPLE_MS, unready: new Set() }).length === 1;
          expect(r.ready).toBe(ruled && c.writtenAgo !== null);
          expect(r.reasons).not.toContain('it is not among the ready standbys');
        },
      ),
    );
  });

  it("judges freshness by S3 time only: the samples' own clock does not count", () => {
    const skewed = hbOf('node-2', {}, { at: NOW - 3_600_000 });
    expect(
      isFresh(seen(skewed, NOW - 1000), NOW, { sampleMs: SAMPLE_MS, keepAliveMs: 300_000, holder: 'node-1' }),
    ).toBe(true);
    expect(readiness('node-2', base({ heartbeats: new Map([['node-2', seen(skewed, NOW - 1000)]]) })).ready).toBe(true);
  });
});
