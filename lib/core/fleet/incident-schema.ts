import { z } from 'zod';
import { nodeNameSchema } from '../schemas';

/** The shapes of an incident as `watchdog/state.json` stores it, and the steps that move it (incident.ts). */

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
  z.object({
    name: z.literal('failover-failed'),
    failover: failoverPlanSchema,
    detail: z.string().max(500),
    finishedAt: z.number(),
  }),
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
export type Opening = Extract<
  Step,
  { kind: 'STALLED' | 'REDUNDANCY_LOST' | 'STANDBY_UNREADY' | 'NODE_SILENT' | 'NODE_DEAD' }
>;
