import type { EventKind, FleetEvent } from '../events';
import type { Leader } from '../schemas';
import type { FailoverPlan, Incident, Stage, StageName } from '../fleet/incident';
import { foldWritten, type Trail } from '../fleet/incident-history';
import type { NodeWatch } from '../fleet/watchdog-state';

/**
 * Replaying an incident: what an operator sees in the Lambda console or with `fleet replay`.
 * The plan lists each step of the incident's ladder and whether it is done, given the current
 * state; the action is the one thing an `execute` may carry out to resume it. Pure.
 */

export type StepStatus = 'done' | 'pending' | 'skipped' | 'failed' | 'not-reached';

export interface PlanStep {
  step: string;
  status: StepStatus;
  detail: string;
}

/** The one step an execute carries out; each is claimed by CAS on the watchdog state first. */
export type ReplayAction =
  | { kind: 'send-restart'; command: 'restartWorker' | 'restartAgent'; claimedAt: number }
  | { kind: 'verify-restart'; commandId: string; deadline: number }
  | { kind: 'resume-failover'; step: FailoverPlan }
  | { kind: 'retry-failover'; to: string; fromEpoch: number };

export type ReplayVerdict = 'resume' | 'nothing-to-do' | 'watchdog-owns' | 'refused';

export interface ReplayPlan {
  eventId: string;
  incidentId: string;
  node: string;
  /** stall, dead, standby; `alert` for node alerts; `manual` for operator failovers. */
  incident: Incident['kind'] | 'alert' | 'manual';
  epoch: number;
  current: { primary: string | null; epoch: number | null };
  /** Whether the incident is still open in the watchdog's state. */
  open: boolean;
  steps: PlanStep[];
  verdict: ReplayVerdict;
  reason: string;
  action: ReplayAction | null;
}

/** What the plan is made from; gathered by the caller. */
export interface ReplayFacts {
  event: FleetEvent;
  leader: Leader | null;
  /** The watchdog's record of the event's node, if any. */
  watch: NodeWatch | null;
  /** Kinds already written under `events/<incidentId>/`. */
  written: ReadonlySet<EventKind>;
  /** Standbys that could take over now, best first (readyStandbys). */
  ready: readonly string[];
  /** Whether an origin record is configured (the traffic step applies). */
  dns: boolean;
  restartVerifyMs: number;
  /** How long a claimed step belongs to the invocation that claimed it (the ladder's rule). */
  claimStaleMs: number;
  now: number;
}

export const step = (name: string, status: StepStatus, detail: string): PlanStep => ({ step: name, status, detail });

/** Where the incident got: its written events folded through the machine, and its open stage. */
export interface Where {
  trail: Trail;
  /** The incident passed through the stage (or is in it). */
  reached: (name: StageName) => boolean;
  /** The incident is in the stage now (open), or was left in it (closed). */
  at: (name: StageName) => boolean;
  /** Why it escalated, when it did. */
  why: Extract<Stage, { name: 'escalating' }>['why'] | null;
}

export const whereOf = (facts: ReplayFacts, open: Incident | null): Where => {
  const trail = foldWritten(facts.written);
  // The open incident's stage, else where the written events leave it.
  const stage = open?.stage ?? trail.stage;
  const current = stage === 'closed' || stage === null ? null : stage;
  return {
    trail,
    reached: (name) => trail.visited.includes(name) || open?.stage.name === name,
    at: (name) => current?.name === name,
    why: current?.name === 'escalating' ? current.why : null,
  };
};

export const incidentKindOf = (facts: ReplayFacts, open: Incident | null, where: Where): ReplayPlan['incident'] => {
  if (open !== null) return open.kind;
  if (where.trail.kind !== null) return where.trail.kind;
  return facts.event.incidentId.startsWith('manual-') ? 'manual' : 'alert';
};

export const restartSteps = (facts: ReplayFacts, open: Incident | null, where: Where, what: string): PlanStep[] => {
  const { written } = facts;
  const r = open?.restart ?? null;
  if (written.has('RESTART_BUDGET_EXHAUSTED') || where.why === 'budget')
    return [step(`restart ${what}`, 'skipped', 'the hourly restart budget was spent')];
  const sent = where.reached('restart-sent') || r?.commandId !== undefined;
  const failed = written.has('RESTART_FAILED') || where.why === 'restart-failed';
  const send = sent
    ? step(`restart ${what}`, 'done', r?.commandId === undefined ? 'command sent' : `command ${r.commandId} sent`)
    : failed
      ? step(`restart ${what}`, 'failed', r?.detail ?? 'the command could not be delivered')
      : where.at('restart-claimed')
        ? step(`restart ${what}`, 'pending', 'claimed but not sent')
        : step(`restart ${what}`, 'not-reached', '');
  const result = written.has('RESTART_RESULT')
    ? step('restart result', 'done', 'the command succeeded')
    : failed
      ? step('restart result', 'failed', r?.detail ?? 'the command failed')
      : sent
        ? step('restart result', 'pending', 'waiting for the command result')
        : step('restart result', 'not-reached', '');
  return [send, result];
};

export const failoverSteps = (facts: ReplayFacts, open: Incident | null, where: Where): PlanStep[] => {
  const { written, leader, event } = facts;
  const stage = open?.stage;
  const f = stage?.name === 'failing-over' || stage?.name === 'failover-failed' ? stage.failover : null;
  const to = f?.to ?? event.newPrimary;
  const promoted =
    written.has('PROMOTED') ||
    (to !== undefined && f !== null && leader !== null && leader.primary === to && leader.epoch > f.fromEpoch);
  if (!where.reached('failing-over') && !where.reached('failover-failed')) {
    return [
      written.has('NO_STANDBY')
        ? step('choose a standby', 'failed', 'no ready standby (or within the cooldown)')
        : step('choose a standby', 'not-reached', ''),
    ];
  }
  const steps: PlanStep[] = [
    step('choose a standby', 'done', to === undefined ? 'failover started' : `failing over to ${to}`),
  ];
  if (written.has('OLD_PRIMARY_STOPPED'))
    steps.push(step('stop the old primary', 'done', 'worker stopped before the handover'));
  else if (f?.outgoingStopped === true) steps.push(step('stop the old primary', 'skipped', 'its instance is stopped'));
  else
    steps.push(
      step(
        'stop the old primary',
        promoted ? 'skipped' : 'pending',
        promoted ? 'not confirmed; the old primary fences itself when its lease lapses' : 'not confirmed yet',
      ),
    );
  steps.push(
    promoted
      ? step('promote the standby', 'done', `${to ?? '?'} is primary`)
      : step(
          'promote the standby',
          stage?.name === 'failover-failed' ? 'failed' : 'pending',
          stage?.name === 'failover-failed' ? stage.detail : '',
        ),
  );
  if (facts.dns)
    steps.push(
      written.has('RECORD_CHANGED')
        ? step('move traffic', 'done', 'origin record changed')
        : step('move traffic', promoted ? 'pending' : 'not-reached', ''),
    );
  else
    steps.push(
      step('move traffic', 'skipped', 'no origin record configured (Route 53 health checks move data-plane traffic)'),
    );
  return steps;
};

export const ladderSteps = (
  facts: ReplayFacts,
  kind: ReplayPlan['incident'],
  open: Incident | null,
  where: Where,
): PlanStep[] => {
  const { written } = facts;
  const isOpen = open !== null;
  const closed = (detail: string): PlanStep =>
    step(
      'close the incident',
      isOpen ? 'pending' : 'done',
      isOpen ? detail : written.has('RECOVERED') ? 'recovered' : 'closed',
    );
  switch (kind) {
    case 'stall': {
      const steps = [step('detect the stall', 'done', 'STALLED'), ...restartSteps(facts, open, where, 'the worker')];
      if (where.reached('escalating') || where.reached('failing-over') || where.reached('failover-failed'))
        steps.push(...failoverSteps(facts, open, where));
      steps.push(closed('waiting for healthy samples or escalation'));
      return steps;
    }
    case 'dead':
      return [
        step(
          'detect the dead node',
          'done',
          written.has('NODE_DEAD') || where.reached('escalating') ? 'NODE_DEAD' : 'NODE_SILENT',
        ),
        ...failoverSteps(facts, open, where),
        closed('failover not complete'),
      ];
    case 'standby': {
      const restarted = open?.restart != null || where.reached('restart-claimed') || where.reached('restart-sent');
      return [
        step('detect the lost standby', 'done', written.has('AGENT_DEAD') ? 'AGENT_DEAD' : 'REDUNDANCY_LOST'),
        ...(restarted ? restartSteps(facts, open, where, 'the agent') : []),
        step(
          'bring the standby back',
          isOpen ? 'pending' : 'done',
          isOpen
            ? restarted
              ? 'waiting for the agent to report again'
              : 'a person acts (docs/runbook.md)'
            : 'heard from again',
        ),
      ];
    }
    case 'rejoin': {
      const failed = written.has('REJOIN_FAILED');
      const done = !isOpen && !failed;
      return [
        step('detect the unready standby', 'done', 'STANDBY_UNREADY'),
        ...restartSteps(facts, open, where, 'the worker in standby mode'),
        step(
          'rejoin',
          failed ? 'failed' : done ? 'done' : 'pending',
          failed
            ? 'the worker still failed its self-test'
            : done
              ? 'its worker passed its self-test'
              : "waiting for the worker's self-test",
        ),
      ];
    }
    case 'manual':
      return [step('manual failover', written.has('PROMOTED') ? 'done' : 'pending', facts.event.summary)];
    case 'alert':
      return [step(`alert ${facts.event.kind}`, 'done', 'raised by a node; nothing to replay (docs/runbook.md)')];
  }
};
