import fc from 'fast-check';
import { EVENT_KINDS, type EventKind } from '../../../../lib/core/events';
import { foldWritten } from '../../../../lib/core/fleet/incident-history';
import {
  advance,
  incidentSchema,
  openIncident,
  TABLES,
  type Incident,
  type IncidentKind,
  type Opening,
  type Step,
} from '../../../../lib/core/fleet/incident';
import { next } from '../../../../lib/core/fleet/incident-pending';

const timing = { restartVerifyMs: 60_000 };
const plan = { to: 'node-2', fromEpoch: 3, claimedAt: 10, outgoingStopped: false, stopOutgoing: true };

const opened = (kind: IncidentKind, step: Opening): Incident =>
  openIncident({ id: 'node-1-e3-i1', kind, epoch: 3, at: 1 }, step);

/** Every step the machine knows, with a payload. */
const STEPS: readonly Step[] = [
  { kind: 'RESTART_BUDGET_EXHAUSTED', at: 5 },
  { kind: 'RESTART_SENT', at: 5, commandId: 'cmd-1' },
  { kind: 'RESTART_RESULT', at: 6, detail: 'Success' },
  { kind: 'RESTART_FAILED', at: 6, detail: 'Failed' },
  { kind: 'STILL_STALLED' },
  { kind: 'NODE_DEAD' },
  { kind: 'NO_STANDBY' },
  { kind: 'FAILOVER_STARTED', failover: plan },
  { kind: 'OLD_PRIMARY_STOPPED' },
  { kind: 'PROMOTED' },
  { kind: 'RECORD_CHANGED' },
  { kind: 'FAILOVER_FAILED', at: 7, detail: 'superseded' },
  { kind: 'REJOIN_FAILED' },
  { kind: 'RECOVERED' },
  { kind: 'CLAIM_RENEWED', at: 8 },
  { kind: 'FAILOVER_DONE' },
  { kind: 'SUPERSEDED' },
];
const OPENINGS: readonly [IncidentKind, Opening][] = [
  ['stall', { kind: 'STALLED', at: 1 }],
  ['standby', { kind: 'REDUNDANCY_LOST', at: 1, restart: true }],
  ['standby', { kind: 'REDUNDANCY_LOST', at: 1, restart: false }],
  ['dead', { kind: 'NODE_SILENT' }],
  ['dead', { kind: 'NODE_DEAD' }],
  ['rejoin', { kind: 'STANDBY_UNREADY', at: 1 }],
];

const isEventKind = (kind: string): kind is EventKind => (EVENT_KINDS as readonly string[]).includes(kind);

/** A walk through the machine: the steps it accepted, from one opening. */
const walk = (
  kind: IncidentKind,
  opening: Opening,
  steps: readonly Step[],
): { incident: Incident | 'closed'; accepted: Step[] } => {
  let incident: Incident | 'closed' = opened(kind, opening);
  const accepted: Step[] = [opening];
  for (const step of steps) {
    if (incident === 'closed') break;
    const moved: Incident | 'closed' | null = advance(incident, step);
    if (moved === null) continue;
    incident = moved;
    accepted.push(step);
  }
  return { incident, accepted };
};

const walkArb = fc.record({
  opening: fc.constantFrom(...OPENINGS),
  steps: fc.array(fc.constantFrom(...STEPS), { maxLength: 14 }),
});

describe('the incident state machine', () => {
  it('has tables whose rows each name their edges, for steps the machine knows', () => {
    for (const table of Object.values(TABLES)) {
      for (const [kind, row] of Object.entries(table)) {
        expect(row?.edges.length).toBeGreaterThan(0);
        expect(STEPS.some((s) => s.kind === kind) || OPENINGS.some(([, o]) => o.kind === kind)).toBe(true);
      }
    }
  });

  it('moves only along an edge its row names (property)', () => {
    fc.assert(
      fc.property(walkArb, ({ opening: [kind, opening], steps }) => {
        let incident: Incident | 'closed' = opened(kind, opening);
        for (const step of steps) {
          if (incident === 'closed') return;
          const moved: Incident | 'closed' | null = advance(incident, step);
          if (moved === null) continue;
          const to = moved === 'closed' ? 'closed' : moved.stage.name;
          const edges = TABLES[kind][step.kind]?.edges ?? [];
          expect(edges).toContainEqual([incident.stage.name, to]);
          incident = moved;
        }
      }),
    );
  });

  it('only ever holds incidents the state file accepts, and nothing moves a closed incident (property)', () => {
    fc.assert(
      fc.property(walkArb, ({ opening: [kind, opening], steps }) => {
        let incident: Incident | 'closed' = opened(kind, opening);
        for (const step of steps) {
          if (incident === 'closed') return;
          const moved: Incident | 'closed' | null = advance(incident, step);
          if (moved === null) continue;
          if (moved !== 'closed') {
            expect(incidentSchema.parse(moved)).toEqual(moved);
            expect({ id: moved.id, kind: moved.kind, epoch: moved.epoch, openedAt: moved.openedAt }).toEqual({
              id: incident.id,
              kind: incident.kind,
              epoch: incident.epoch,
              openedAt: incident.openedAt,
            });
          }
          incident = moved;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a step from a stage its row does not list, changing nothing', () => {
    const claimed = opened('stall', { kind: 'STALLED', at: 1 });
    expect(advance(claimed, { kind: 'FAILOVER_STARTED', failover: plan })).toBeNull();
    expect(advance(claimed, { kind: 'STILL_STALLED' })).toBeNull();
    expect(advance(claimed, { kind: 'FAILOVER_DONE' })).toBeNull();
    // A duplicate outcome of the same restart is refused, as is a second NO_STANDBY alert.
    const sent = advance(claimed, { kind: 'RESTART_SENT', at: 2, commandId: 'cmd-1' }) as Incident;
    const watching = advance(sent, { kind: 'RESTART_RESULT', at: 3, detail: 'Success' }) as Incident;
    expect(advance(watching, { kind: 'RESTART_RESULT', at: 4, detail: 'Success' })).toBeNull();
    const escalating = advance(watching, { kind: 'STILL_STALLED' }) as Incident;
    const alerted = advance(escalating, { kind: 'NO_STANDBY' }) as Incident;
    expect(alerted.stage).toEqual({ name: 'escalating', why: 'still-stalled', noStandbyAlerted: true });
    expect(advance(alerted, { kind: 'NO_STANDBY' })).toBeNull();
  });

  it('walks the stall ladder: restart, still stalled, failover, done', () => {
    const steps: Step[] = [
      { kind: 'RESTART_SENT', at: 2, commandId: 'cmd-1' },
      { kind: 'RESTART_RESULT', at: 3, detail: 'Success' },
      { kind: 'STILL_STALLED' },
      { kind: 'FAILOVER_STARTED', failover: plan },
      { kind: 'PROMOTED' },
      { kind: 'FAILOVER_DONE' },
    ];
    const names: string[] = [];
    let incident: Incident | 'closed' = opened('stall', { kind: 'STALLED', at: 1 });
    for (const step of steps) {
      names.push(incident === 'closed' ? 'closed' : incident.stage.name);
      incident = advance(incident as Incident, step) ?? incident;
    }
    names.push(incident === 'closed' ? 'closed' : incident.stage.name);
    expect(names).toEqual([
      'restart-claimed',
      'restart-sent',
      'watching',
      'escalating',
      'failing-over',
      'failing-over',
      'closed',
    ]);
  });

  it('fails a stall over when its restart fails, but keeps watching a standby whose agent restart failed', () => {
    const failed: Step = { kind: 'RESTART_FAILED', at: 3, detail: 'not delivered' };
    expect((advance(opened('stall', { kind: 'STALLED', at: 1 }), failed) as Incident).stage).toEqual({
      name: 'escalating',
      why: 'restart-failed',
      noStandbyAlerted: false,
    });
    expect(
      (advance(opened('standby', { kind: 'REDUNDANCY_LOST', at: 1, restart: true }), failed) as Incident).stage,
    ).toEqual({ name: 'watching' });
  });

  it(
    'walks a rejoin: a worker restart, then the self-test decides; ' +
      'never a failover, and REJOIN_FAILED only once the restart is over',
    () => {
      const claimed = opened('rejoin', { kind: 'STANDBY_UNREADY', at: 1 });
      expect(claimed.restart).toEqual({ command: 'restartWorker', claimedAt: 1 });
      expect(advance(claimed, { kind: 'REJOIN_FAILED' })).toBeNull();
      expect(advance(claimed, { kind: 'FAILOVER_STARTED', failover: plan })).toBeNull();
      expect(advance(claimed, { kind: 'STILL_STALLED' })).toBeNull();
      const sent = advance(claimed, { kind: 'RESTART_SENT', at: 2, commandId: 'cmd-1' }) as Incident;
      expect(advance(sent, { kind: 'REJOIN_FAILED' })).toBeNull();
      const watching = advance(sent, { kind: 'RESTART_RESULT', at: 3, detail: 'Success' }) as Incident;
      expect(watching.stage).toEqual({ name: 'watching' });
      expect(advance(watching, { kind: 'REJOIN_FAILED' })).toBe('closed');
      expect(advance(watching, { kind: 'RECOVERED' })).toBe('closed');
      // Out of budget: it watches, and only readiness (or a person) ends it.
      const spent = advance(claimed, { kind: 'RESTART_BUDGET_EXHAUSTED', at: 2 }) as Incident;
      expect(spent.stage).toEqual({ name: 'watching' });
      expect(
        foldWritten(new Set<EventKind>(['STANDBY_UNREADY', 'RESTART_SENT', 'RESTART_RESULT', 'REJOIN_FAILED'])),
      ).toEqual({
        kind: 'rejoin',
        stage: 'closed',
        visited: ['restart-claimed', 'restart-sent', 'watching'],
        unplaced: [],
      });
    },
  );

  it('records the result of a restart sent before the incident escalated, without moving the stage', () => {
    const claimed = opened('stall', { kind: 'STALLED', at: 1 });
    const sent = advance(claimed, { kind: 'RESTART_SENT', at: 2, commandId: 'cmd-1' }) as Incident;
    const escalated = advance(sent, { kind: 'STILL_STALLED' }) as Incident;
    expect(next(escalated, timing, 3)).toEqual({ kind: 'choose-standby', noStandbyAlerted: false });
    const result = advance(escalated, {
      kind: 'RESTART_FAILED',
      at: 70_000,
      detail: 'no result before the verification deadline',
    }) as Incident;
    expect(result.stage).toEqual(escalated.stage);
    expect(result.restart).toMatchObject({ commandId: 'cmd-1', finishedAt: 70_000 });
  });

  it.each<[string, Incident, ReturnType<typeof next>['kind']]>([
    ['a claimed restart', opened('stall', { kind: 'STALLED', at: 1 }), 'send-restart'],
    [
      'a sent restart',
      advance(opened('stall', { kind: 'STALLED', at: 1 }), { kind: 'RESTART_SENT', at: 2, commandId: 'c' }) as Incident,
      'verify-restart',
    ],
    ['a silent primary', opened('dead', { kind: 'NODE_SILENT' }), 'none'],
    ['a dead primary', opened('dead', { kind: 'NODE_DEAD' }), 'choose-standby'],
    [
      'a lost standby with nothing to restart',
      opened('standby', { kind: 'REDUNDANCY_LOST', at: 1, restart: false }),
      'none',
    ],
    [
      'a claimed failover',
      advance(opened('dead', { kind: 'NODE_DEAD' }), { kind: 'FAILOVER_STARTED', failover: plan }) as Incident,
      'carry-out-failover',
    ],
  ])('names the one pending action of %s', (_, incident, kind) => {
    expect(next(incident, timing, 2).kind).toBe(kind);
  });

  it('calls a claim nobody sent overdue once the verification window has passed', () => {
    const claimed = opened('stall', { kind: 'STALLED', at: 1 });
    expect(next(claimed, timing, 60_001)).toMatchObject({ kind: 'send-restart', overdue: false });
    expect(next(claimed, timing, 60_002)).toMatchObject({ kind: 'send-restart', overdue: true });
  });

  it('folds the written events of any walk to the stage the walk reached (property)', () => {
    // Internal steps write no event; of them only CLAIM_RENEWED leaves the stage as it was.
    const written = fc.record({
      opening: fc.constantFrom(...OPENINGS),
      steps: fc.array(fc.constantFrom(...STEPS.filter((s) => isEventKind(s.kind) || s.kind === 'CLAIM_RENEWED')), {
        maxLength: 14,
      }),
    });
    fc.assert(
      fc.property(written, ({ opening: [kind, opening], steps }) => {
        const { incident, accepted } = walk(kind, opening, steps);
        const kinds: EventKind[] = accepted.flatMap((s) => (isEventKind(s.kind) ? [s.kind] : []));
        // Each kind is written once per incident (its event id is `<incident>.<kind>`): walks
        // that would write one twice are not histories the watchdog can leave.
        fc.pre(new Set(kinds).size === kinds.length);
        // REDUNDANCY_LOST does not say whether an agent restart was claimed: only its later steps do.
        fc.pre(
          !(opening.kind === 'REDUNDANCY_LOST' && opening.restart && !kinds.some((k) => k.startsWith('RESTART_'))),
        );
        const trail = foldWritten(new Set(kinds));
        expect(trail.kind).toBe(kind);
        // Only steps inside a failover, which move no stage, may be met out of the fold's order.
        expect(trail.unplaced.filter((k) => k !== 'OLD_PRIMARY_STOPPED' && k !== 'RECORD_CHANGED')).toEqual([]);
        const promoted = kinds.includes('PROMOTED');
        const expected = incident === 'closed' || promoted ? 'closed' : incident.stage.name;
        expect(trail.stage === 'closed' ? 'closed' : trail.stage?.name).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('places a retried failover that succeeded after it had failed', () => {
    const trail = foldWritten(new Set<EventKind>(['NODE_DEAD', 'FAILOVER_STARTED', 'FAILOVER_FAILED', 'PROMOTED']));
    expect(trail).toEqual({
      kind: 'dead',
      stage: 'closed',
      visited: ['escalating', 'failing-over', 'failover-failed'],
      unplaced: [],
    });
  });

  it('reads a silent agent written by an older release as a lost standby', () => {
    expect(foldWritten(new Set<EventKind>(['AGENT_DEAD', 'RESTART_SENT']))).toMatchObject({
      kind: 'standby',
      stage: { name: 'restart-sent' },
    });
  });
});
