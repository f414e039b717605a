import { z } from 'zod';
import { nodeNameSchema } from '../schemas';

/**
 * The incident ladder as one state machine (DESIGN section 4, protocols; docs/architecture.md). An open
 * incident is in exactly one named stage; every move between stages is a row of TRANSITIONS,
 * keyed by the event kind written under `events/` when it happens (or by one of three internal
 * steps that write no event). The watchdog applies the rows forward, a replay folds the written
 * events through the same rows, and `next` (incident-pending.ts) names the one pending action of a stage. Pure.
 */

/**
 * stall: the primary stopped making progress; dead: the primary's node is silent or gone;
 * standby: a standby is lost (silent); rejoin: a standby is heard from but its worker is not
 * ready (stopped, or failing its self-test), so it is restarted to rejoin as a ready standby.
 */
export const INCIDENT_KINDS = ['stall', 'dead', 'standby', 'rejoin'] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

/** What was done about a restart, whatever stage the incident has reached since: its history. */
export const restartSchema = z.object({
  /** Which fixed node command: the worker (stalls) or the agent (a lost standby). */
  command: z.enum(['restartWorker', 'restartAgent']),
  claimedAt: z.number(),
  commandId: z.string().max(64).optional(),
  sentAt: z.number().optional(),
  /** Set once the result is known (or the restart was refused or never sent). */
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
  /**
   * The worker process a stall's restart replaces (`<pid>:<start ticks>`, from the samples):
   * while it drains it may still finish a stage, and that progress speaks for the stalled
   * worker, not for the restart. Older records and other restarts leave it out.
   */
  worker: z.string().max(64).optional(),
  /** Set when the restart did not happen (refused, never sent, or its command failed): the worker was not replaced. */
  failed: z.boolean().optional(),
});
export type RestartRecord = z.output<typeof restartSchema>;

/** A claimed failover: to whom, from which epoch, and what is known of the old primary. */
export const failoverPlanSchema = z.object({
  to: nodeNameSchema,
  fromEpoch: z.number().int().min(0),
  claimedAt: z.number(),
  /** The old primary is confirmed stopped (its instance is stopped): no stop command needed. */
  outgoingStopped: z.boolean(),
  /** The old primary's instance answers SSM: try to stop its worker first. */
  stopOutgoing: z.boolean(),
});
export type FailoverPlan = z.output<typeof failoverPlanSchema>;

/** Why an incident wants a failover. */
export const ESCALATIONS = ['still-stalled', 'restart-failed', 'budget', 'confirmed-dead'] as const;

export const stageSchema = z.discriminatedUnion('name', [
  /** A restart is claimed by CAS; the claimer sends it. */
  z.object({ name: z.literal('restart-claimed') }),
  /** The restart went out; its result is read (verified) until the verification deadline. */
  z.object({ name: z.literal('restart-sent') }),
  /** Nothing to do but watch: the samples decide (a stall), or the node is heard from again (a standby). */
  z.object({ name: z.literal('watching') }),
  /** The primary is silent and nothing confirms it is gone: its lease decides. */
  z.object({ name: z.literal('silent') }),
  /** A failover is wanted; it waits for a ready standby (alerted once) and the cooldown. */
  z.object({ name: z.literal('escalating'), why: z.enum(ESCALATIONS), noStandbyAlerted: z.boolean() }),
  /** A failover is claimed and carried out step by idempotent step. */
  z.object({ name: z.literal('failing-over'), failover: failoverPlanSchema }),
  /** The failover did not complete: a replay (or a person) retries it. */
  z.object({ name: z.literal('failover-failed'), failover: failoverPlanSchema, detail: z.string().max(500), finishedAt: z.number() }),
]);
export type Stage = z.output<typeof stageSchema>;
export type StageName = Stage['name'];

export const incidentSchema = z.object({
  /** `<node>-e<epoch>-i<n>`: event ids are `<incident id>.<kind>`. */
  id: z.string().min(1).max(160),
  kind: z.enum(INCIDENT_KINDS),
  openedAt: z.number(),
  epoch: z.number().int().min(0),
  stage: stageSchema,
  restart: restartSchema.nullable(),
});
export type Incident = z.output<typeof incidentSchema>;

/** The inputs of the machine: an event kind with what it carries, or an internal step. */
export type Step =
  | { kind: 'STALLED'; at: number; worker?: string }
  | { kind: 'REDUNDANCY_LOST'; at: number; restart: boolean }
  | { kind: 'STANDBY_UNREADY'; at: number }
  | { kind: 'NODE_SILENT' }
  | { kind: 'NODE_DEAD' }
  | { kind: 'RESTART_BUDGET_EXHAUSTED'; at: number }
  | { kind: 'RESTART_SENT'; at: number; commandId: string }
  | { kind: 'RESTART_RESULT'; at: number; detail: string }
  | { kind: 'RESTART_FAILED'; at: number; detail: string }
  | { kind: 'STILL_STALLED' }
  | { kind: 'NO_STANDBY' }
  | { kind: 'FAILOVER_STARTED'; failover: FailoverPlan }
  | { kind: 'OLD_PRIMARY_STOPPED' }
  | { kind: 'PROMOTED' }
  | { kind: 'RECORD_CHANGED' }
  | { kind: 'FAILOVER_FAILED'; at: number; detail: string }
  | { kind: 'REJOIN_FAILED' }
  | { kind: 'RECOVERED' }
  /** Internal: a claim taken over by whoever resumes it (a later watchdog run, or a replay). */
  | { kind: 'CLAIM_RENEWED'; at: number }
  /** Internal: the failover is carried out to the end (promoted, worker started, traffic moved). */
  | { kind: 'FAILOVER_DONE' }
  /** Internal: the role moved away from the node (a manual failover, or it lost the lease). */
  | { kind: 'SUPERSEDED' };
export type StepKind = Step['kind'];

/** The moves that open an incident: no stage before them. */
export type Opening = Extract<Step, { kind: 'STALLED' | 'REDUNDANCY_LOST' | 'STANDBY_UNREADY' | 'NODE_SILENT' | 'NODE_DEAD' }>;

/** The result of a row: the incident's next stage and restart history, or closed. */
type Moved = { stage: Stage; restart: RestartRecord | null } | 'closed';

interface Row<K extends StepKind> {
  /** The stages the step applies in; '(none)' is an incident about to open. */
  from: readonly (StageName | '(none)')[];
  /** Only for these kinds of incident (all when absent). */
  kinds?: readonly IncidentKind[];
  to: (incident: Incident, step: Extract<Step, { kind: K }>) => Moved;
  /** A further condition in the stage (a duplicate outcome or alert is refused). */
  when?: (incident: Incident) => boolean;
  /** The target stage(s), in words, for the diagram in docs/architecture.md. */
  says: string;
}

const ANY: readonly StageName[] = ['restart-claimed', 'restart-sent', 'watching', 'silent', 'escalating', 'failing-over', 'failover-failed'];
const AFTER_ESCALATION: readonly StageName[] = ['escalating', 'failing-over', 'failover-failed'];

const restartOutstanding = (i: Incident): boolean => i.restart !== null && i.restart.finishedAt === undefined;

const escalate = (why: (typeof ESCALATIONS)[number]): Stage => ({ name: 'escalating', why, noStandbyAlerted: false });
const stay = (i: Incident): Moved => ({ stage: i.stage, restart: i.restart });
const finish = (i: Incident, at: number, detail: string, failed = false): RestartRecord | null =>
  i.restart === null ? null : { ...i.restart, finishedAt: at, detail: detail.slice(0, 500), ...(failed ? { failed } : {}) };

/** A restart's outcome: the ladder moves on from a restart in flight; after escalation it is only history. */
const restartOutcome = (i: Incident, at: number, detail: string, failed: boolean): Moved => {
  const restart = finish(i, at, detail, failed);
  if (AFTER_ESCALATION.includes(i.stage.name)) return { stage: i.stage, restart };
  return { stage: failed && i.kind === 'stall' ? escalate('restart-failed') : { name: 'watching' }, restart };
};

/** Every move of the ladder. A step from a stage not listed is refused (`advance` returns null). */
export const TRANSITIONS: { [K in StepKind]: Row<K> } = {
  STALLED: { from: ['(none)'], kinds: ['stall'], says: 'restart-claimed (worker)', to: (_, s) => ({ stage: { name: 'restart-claimed' }, restart: { command: 'restartWorker', claimedAt: s.at, ...(s.worker === undefined ? {} : { worker: s.worker }) } }) },
  REDUNDANCY_LOST: {
    from: ['(none)'],
    kinds: ['standby'],
    says: 'restart-claimed (agent); watching when AWS says the node is gone',
    to: (_, s) => (s.restart ? { stage: { name: 'restart-claimed' }, restart: { command: 'restartAgent', claimedAt: s.at } } : { stage: { name: 'watching' }, restart: null }),
  },
  STANDBY_UNREADY: {
    from: ['(none)'],
    kinds: ['rejoin'],
    says: 'restart-claimed (worker, in standby mode)',
    to: (_, s) => ({ stage: { name: 'restart-claimed' }, restart: { command: 'restartWorker', claimedAt: s.at } }),
  },
  NODE_SILENT: { from: ['(none)'], kinds: ['dead'], says: 'silent', to: () => ({ stage: { name: 'silent' }, restart: null }) },
  NODE_DEAD: { from: ['(none)', 'silent'], kinds: ['dead'], says: 'escalating (confirmed-dead)', to: (i) => ({ stage: escalate('confirmed-dead'), restart: i.restart }) },
  RESTART_BUDGET_EXHAUSTED: {
    from: ['restart-claimed'],
    says: 'escalating (budget) for a stall; watching for a standby or a rejoin',
    to: (i, s) => ({ stage: i.kind === 'stall' ? escalate('budget') : { name: 'watching' }, restart: finish(i, s.at, 'restart budget exhausted', true) }),
  },
  RESTART_SENT: {
    from: ['restart-claimed', ...AFTER_ESCALATION],
    when: (i) => restartOutstanding(i) && i.restart?.commandId === undefined,
    says: 'restart-sent (history only once escalated)',
    to: (i, s) => {
      const restart = i.restart === null ? null : { ...i.restart, commandId: s.commandId, sentAt: s.at };
      return { stage: AFTER_ESCALATION.includes(i.stage.name) ? i.stage : { name: 'restart-sent' }, restart };
    },
  },
  RESTART_RESULT: {
    from: ['restart-sent', ...AFTER_ESCALATION],
    when: restartOutstanding,
    says: 'watching (history only once escalated)',
    to: (i, s) => restartOutcome(i, s.at, s.detail, false),
  },
  RESTART_FAILED: {
    from: ['restart-claimed', 'restart-sent', ...AFTER_ESCALATION],
    when: restartOutstanding,
    says: 'escalating (restart-failed) for a stall; watching for a standby (history only once escalated)',
    to: (i, s) => restartOutcome(i, s.at, s.detail, true),
  },
  STILL_STALLED: { from: ['restart-sent', 'watching'], kinds: ['stall'], says: 'escalating (still-stalled)', to: (i) => ({ stage: escalate('still-stalled'), restart: i.restart }) },
  NO_STANDBY: {
    from: ['escalating'],
    when: (i) => i.stage.name === 'escalating' && !i.stage.noStandbyAlerted,
    says: 'escalating, alerted once',
    to: (i) => (i.stage.name === 'escalating' ? { stage: { ...i.stage, noStandbyAlerted: true }, restart: i.restart } : stay(i)),
  },
  FAILOVER_STARTED: { from: ['escalating', 'failover-failed'], kinds: ['stall', 'dead'], says: 'failing-over', to: (i, s) => ({ stage: { name: 'failing-over', failover: s.failover }, restart: i.restart }) },
  OLD_PRIMARY_STOPPED: { from: ['failing-over'], says: 'failing-over (a step of it)', to: stay },
  PROMOTED: { from: ['failing-over'], says: 'failing-over (a step of it)', to: stay },
  RECORD_CHANGED: { from: ['failing-over'], says: 'failing-over (a step of it)', to: stay },
  FAILOVER_FAILED: {
    from: ['failing-over'],
    says: 'failover-failed',
    to: (i, s) => (i.stage.name === 'failing-over' ? { stage: { name: 'failover-failed', failover: i.stage.failover, detail: s.detail.slice(0, 500), finishedAt: s.at }, restart: i.restart } : stay(i)),
  },
  REJOIN_FAILED: {
    from: ['watching'],
    kinds: ['rejoin'],
    when: (i) => i.restart !== null && i.restart.finishedAt !== undefined,
    says: 'closed (the next run may open another, within the budget)',
    to: () => 'closed',
  },
  RECOVERED: { from: ANY, says: 'closed', to: () => 'closed' },
  CLAIM_RENEWED: {
    from: ['restart-claimed', 'failing-over'],
    says: 'the same stage, claimed anew',
    to: (i, s) => {
      if (i.stage.name === 'failing-over') return { stage: { ...i.stage, failover: { ...i.stage.failover, claimedAt: s.at } }, restart: i.restart };
      return { stage: i.stage, restart: i.restart === null ? null : { ...i.restart, claimedAt: s.at } };
    },
  },
  FAILOVER_DONE: { from: ['failing-over'], says: 'closed', to: () => 'closed' },
  SUPERSEDED: { from: ANY, says: 'closed', to: () => 'closed' },
};

const rowOf = <K extends StepKind>(kind: K): Row<K> => TRANSITIONS[kind];

/** True when the step applies to the incident as it stands. */
const accepts = (incident: Incident, step: Step): boolean => {
  const row = rowOf(step.kind);
  return row.from.includes(incident.stage.name) && (row.kinds === undefined || row.kinds.includes(incident.kind)) && (row.when === undefined || row.when(incident));
};

/**
 * Moves an open incident by one step: the incident after it, `'closed'`, or null when the step
 * does not apply in its stage (a stale claim, a duplicate outcome, a step of another incident).
 */
export const advance = (incident: Incident, step: Step): Incident | 'closed' | null => {
  if (!accepts(incident, step)) return null;
  const moved = rowOf(step.kind).to(incident, step);
  return moved === 'closed' ? moved : { ...incident, ...moved };
};

/** Opens an incident with the step that detected it. */
export const openIncident = (o: { id: string; kind: IncidentKind; epoch: number; at: number }, step: Opening): Incident => {
  const row = rowOf(step.kind);
  if (!row.from.includes('(none)') || (row.kinds !== undefined && !row.kinds.includes(o.kind))) throw new Error(`${step.kind} does not open a ${o.kind} incident`);
  const blank: Incident = { id: o.id, kind: o.kind, openedAt: o.at, epoch: o.epoch, stage: { name: 'watching' }, restart: null };
  const moved = row.to(blank, step);
  if (moved === 'closed') throw new Error(`${step.kind} closed the incident it opened`);
  return { ...blank, ...moved };
};
