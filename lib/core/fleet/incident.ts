import type { ESCALATIONS } from './incident-schema';
import {
  type Incident,
  type IncidentKind,
  type Opening,
  type RestartRecord,
  type Stage,
  type StageName,
  type Step,
  type StepKind,
} from './incident-schema';

export * from './incident-schema';

/**
 * The incident ladder: one small table per incident kind (docs/architecture.md draws them). An
 * open incident is in exactly one named stage; every move is a row keyed by the event kind it
 * writes under `events/` (or by one of three internal steps that write none). The watchdog
 * applies the rows forward, a replay folds the written events through them, and `next`
 * (incident-pending.ts) names a stage's one pending action. Pure.
 */

/** The result of a row: the incident's next stage and restart history, or closed. */
type Moved = { stage: Stage; restart: RestartRecord | null } | 'closed';

const restartOutstanding = (i: Incident): boolean => i.restart !== null && i.restart.finishedAt === undefined;

/** The conditions a row may add to its stages, by name: the diagrams show the names. */
export const GUARDS = {
  'restart outstanding': restartOutstanding,
  'restart unsent': (i: Incident) => restartOutstanding(i) && i.restart?.commandId === undefined,
  'restart finished': (i: Incident) => i.restart !== null && i.restart.finishedAt !== undefined,
  'not alerted yet': (i: Incident) => i.stage.name === 'escalating' && !i.stage.noStandbyAlerted,
} as const;
export type Guard = keyof typeof GUARDS;

/** A move from a stage ('(none)': an incident about to open) to a stage, or closed. */
export type Edge = readonly [StageName | '(none)', StageName | 'closed'];

export interface Row<K extends StepKind> {
  /** The moves the step may make: the diagrams' edges; `to` never makes another (a property test). */
  edges: readonly Edge[];
  guard?: Guard;
  to: (incident: Incident, step: Extract<Step, { kind: K }>) => Moved;
}
export type Table = { readonly [K in StepKind]?: Row<K> };

const AFTER_ESCALATION: readonly StageName[] = ['escalating', 'failing-over', 'failover-failed'];

const escalate = (why: (typeof ESCALATIONS)[number]): Stage => ({ name: 'escalating', why, noStandbyAlerted: false });
const stay = (i: Incident): Moved => ({ stage: i.stage, restart: i.restart });
const finish = (i: Incident, at: number, detail: string, failed = false): RestartRecord | null =>
  i.restart === null
    ? null
    : { ...i.restart, finishedAt: at, detail: detail.slice(0, 500), ...(failed ? { failed } : {}) };
const selves = (stages: readonly StageName[]): Edge[] => stages.map((s) => [s, s] as const);
const closeRow = <K extends StepKind>(from: readonly StageName[]): Row<K> => ({
  edges: from.map((s) => [s, 'closed'] as const),
  to: () => 'closed',
});

/**
 * The restart, its own small machine: claimed, sent, its result read. `failed` is where a failed
 * or refused restart leads; once a stall escalated, a restart's steps are only its history.
 */
const restartRows = (failed: (why: 'restart-failed' | 'budget') => Stage, after: readonly StageName[]): Table => {
  const outcome = (i: Incident, at: number, detail: string, bad: boolean): Moved => {
    const restart = finish(i, at, detail, bad);
    if (after.includes(i.stage.name)) return { stage: i.stage, restart };
    return { stage: bad ? failed('restart-failed') : { name: 'watching' }, restart };
  };
  return {
    RESTART_BUDGET_EXHAUSTED: {
      edges: [['restart-claimed', failed('budget').name]],
      to: (i, s) => ({ stage: failed('budget'), restart: finish(i, s.at, 'restart budget exhausted', true) }),
    },
    RESTART_SENT: {
      edges: [['restart-claimed', 'restart-sent'], ...selves(after)],
      guard: 'restart unsent',
      to: (i, s) => {
        const restart = i.restart === null ? null : { ...i.restart, commandId: s.commandId, sentAt: s.at };
        return { stage: after.includes(i.stage.name) ? i.stage : { name: 'restart-sent' }, restart };
      },
    },
    RESTART_RESULT: {
      edges: [['restart-sent', 'watching'], ...selves(after)],
      guard: 'restart outstanding',
      to: (i, s) => outcome(i, s.at, s.detail, false),
    },
    RESTART_FAILED: {
      edges: [
        ['restart-claimed', failed('restart-failed').name],
        ['restart-sent', failed('restart-failed').name],
        ...selves(after),
      ],
      guard: 'restart outstanding',
      to: (i, s) => outcome(i, s.at, s.detail, true),
    },
  };
};

/** The failover, shared by a stall and a dead primary: a ready standby chosen, the role moved step by step. */
const FAILOVER_ROWS: Table = {
  NO_STANDBY: {
    edges: [['escalating', 'escalating']],
    guard: 'not alerted yet',
    to: (i) =>
      i.stage.name === 'escalating' ? { stage: { ...i.stage, noStandbyAlerted: true }, restart: i.restart } : stay(i),
  },
  FAILOVER_STARTED: {
    edges: [
      ['escalating', 'failing-over'],
      ['failover-failed', 'failing-over'],
    ],
    to: (i, s) => ({ stage: { name: 'failing-over', failover: s.failover }, restart: i.restart }),
  },
  OLD_PRIMARY_STOPPED: { edges: selves(['failing-over']), to: stay },
  PROMOTED: { edges: selves(['failing-over']), to: stay },
  RECORD_CHANGED: { edges: selves(['failing-over']), to: stay },
  FAILOVER_FAILED: {
    edges: [['failing-over', 'failover-failed']],
    to: (i, s) => {
      if (i.stage.name !== 'failing-over') return stay(i);
      const stage: Stage = {
        name: 'failover-failed',
        failover: i.stage.failover,
        detail: s.detail.slice(0, 500),
        finishedAt: s.at,
      };
      return { stage, restart: i.restart };
    },
  },
  FAILOVER_DONE: { edges: [['failing-over', 'closed']], to: () => 'closed' },
};

/** A claim taken over by whoever resumes it (a later watchdog run, or a replay). */
const claimRenewed = (from: readonly StageName[]): Row<'CLAIM_RENEWED'> => ({
  edges: selves(from),
  to: (i, s) => {
    if (i.stage.name === 'failing-over')
      return { stage: { ...i.stage, failover: { ...i.stage.failover, claimedAt: s.at } }, restart: i.restart };
    return { stage: i.stage, restart: i.restart === null ? null : { ...i.restart, claimedAt: s.at } };
  },
});

const STALL_STAGES: readonly StageName[] = ['restart-claimed', 'restart-sent', 'watching', ...AFTER_ESCALATION];
const DEAD_STAGES: readonly StageName[] = ['silent', ...AFTER_ESCALATION];
const RESTART_STAGES: readonly StageName[] = ['restart-claimed', 'restart-sent', 'watching'];

/** After a lost standby's or a rejoin's restart, whatever its outcome, the node's samples decide. */
const watchAfter = (): Stage => ({ name: 'watching' });

/** Each incident kind's machine, one small table each: a step not in its table, or from another stage, is refused. */
export const TABLES: Readonly<Record<IncidentKind, Table>> = {
  stall: {
    STALLED: {
      edges: [['(none)', 'restart-claimed']],
      to: (_, s) => {
        const restart = {
          command: 'restartWorker' as const,
          claimedAt: s.at,
          ...(s.worker === undefined ? {} : { worker: s.worker }),
        };
        return { stage: { name: 'restart-claimed' }, restart };
      },
    },
    ...restartRows(escalate, AFTER_ESCALATION),
    STILL_STALLED: {
      edges: [
        ['restart-sent', 'escalating'],
        ['watching', 'escalating'],
      ],
      to: (i) => ({ stage: escalate('still-stalled'), restart: i.restart }),
    },
    ...FAILOVER_ROWS,
    CLAIM_RENEWED: claimRenewed(['restart-claimed', 'failing-over']),
    RECOVERED: closeRow(STALL_STAGES),
    SUPERSEDED: closeRow(STALL_STAGES),
  },
  dead: {
    NODE_SILENT: { edges: [['(none)', 'silent']], to: () => ({ stage: { name: 'silent' }, restart: null }) },
    NODE_DEAD: {
      edges: [
        ['(none)', 'escalating'],
        ['silent', 'escalating'],
      ],
      to: (i) => ({ stage: escalate('confirmed-dead'), restart: i.restart }),
    },
    ...FAILOVER_ROWS,
    CLAIM_RENEWED: claimRenewed(['failing-over']),
    RECOVERED: closeRow(DEAD_STAGES),
    SUPERSEDED: closeRow(DEAD_STAGES),
  },
  standby: {
    REDUNDANCY_LOST: {
      edges: [
        ['(none)', 'restart-claimed'],
        ['(none)', 'watching'],
      ],
      to: (_, s) =>
        s.restart
          ? { stage: { name: 'restart-claimed' }, restart: { command: 'restartAgent', claimedAt: s.at } }
          : { stage: { name: 'watching' }, restart: null },
    },
    ...restartRows(watchAfter, []),
    CLAIM_RENEWED: claimRenewed(['restart-claimed']),
    RECOVERED: closeRow(RESTART_STAGES),
    SUPERSEDED: closeRow(RESTART_STAGES),
  },
  rejoin: {
    STANDBY_UNREADY: {
      edges: [['(none)', 'restart-claimed']],
      to: (_, s) => ({ stage: { name: 'restart-claimed' }, restart: { command: 'restartWorker', claimedAt: s.at } }),
    },
    ...restartRows(watchAfter, []),
    CLAIM_RENEWED: claimRenewed(['restart-claimed']),
    // Closed: the next run may open another, within the rejoin budget.
    REJOIN_FAILED: { edges: [['watching', 'closed']], guard: 'restart finished', to: () => 'closed' },
    RECOVERED: closeRow(RESTART_STAGES),
    SUPERSEDED: closeRow(RESTART_STAGES),
  },
};

const rowOf = <K extends StepKind>(kind: IncidentKind, step: K): Row<K> | undefined => TABLES[kind][step];

/** True when the step applies to the incident as it stands. */
const accepts = (incident: Incident, step: Step): boolean => {
  const row = rowOf(incident.kind, step.kind);
  const from = row?.edges.some(([f]) => f === incident.stage.name) ?? false;
  return row !== undefined && from && (row.guard === undefined || GUARDS[row.guard](incident));
};

/**
 * Moves an open incident by one step: the incident after it, `'closed'`, or null when the step
 * does not apply in its stage (a stale claim, a duplicate outcome, a step of another incident).
 */
export const advance = (incident: Incident, step: Step): Incident | 'closed' | null => {
  const row = rowOf(incident.kind, step.kind);
  if (row === undefined || !accepts(incident, step)) return null;
  const moved = row.to(incident, step);
  return moved === 'closed' ? moved : { ...incident, ...moved };
};

/** Opens an incident with the step that detected it. */
export const openIncident = (
  o: { id: string; kind: IncidentKind; epoch: number; at: number },
  step: Opening,
): Incident => {
  const row = rowOf(o.kind, step.kind);
  if (row === undefined || !row.edges.some(([f]) => f === '(none)'))
    throw new Error(`${step.kind} does not open a ${o.kind} incident`);
  const blank: Incident = {
    id: o.id,
    kind: o.kind,
    openedAt: o.at,
    epoch: o.epoch,
    stage: { name: 'watching' },
    restart: null,
  };
  const moved = row.to(blank, step);
  if (moved === 'closed') throw new Error(`${step.kind} closed the incident it opened`);
  return { ...blank, ...moved };
};
