import type { EventKind, FleetEvent } from '../events';
import type { Leader } from '../schemas';
import type { FailoverStep, Incident, NodeWatch } from '../fleet/watchdog-state';

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
  | { kind: 'resume-failover'; step: FailoverStep }
  | { kind: 'retry-failover'; to: string; fromEpoch: number };

export type ReplayVerdict = 'resume' | 'nothing-to-do' | 'watchdog-owns' | 'refused';

export interface ReplayPlan {
  eventId: string;
  incidentId: string;
  node: string;
  /** stall, dead, agent, standby; `alert` for node alerts; `manual` for operator failovers. */
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

const step = (name: string, status: StepStatus, detail: string): PlanStep => ({ step: name, status, detail });

const incidentKindOf = (facts: ReplayFacts, open: Incident | null): ReplayPlan['incident'] => {
  if (open !== null) return open.kind;
  const { written, event } = facts;
  if (written.has('NODE_DEAD')) return 'dead';
  if (written.has('AGENT_DEAD')) return 'agent';
  if (written.has('REDUNDANCY_LOST')) return 'standby';
  if (written.has('STALLED')) return 'stall';
  if (event.incidentId.startsWith('manual-')) return 'manual';
  return 'alert';
};

const restartSteps = (facts: ReplayFacts, open: Incident | null, what: string): PlanStep[] => {
  const { written } = facts;
  const r = open?.restart ?? null;
  if (written.has('RESTART_BUDGET_EXHAUSTED')) return [step(`restart ${what}`, 'skipped', 'the hourly restart budget was spent')];
  const sent = written.has('RESTART_SENT') || r?.status === 'sent' || r?.status === 'succeeded' || (r?.status === 'failed' && r.commandId !== undefined);
  const undelivered = !sent && (written.has('RESTART_FAILED') || r?.status === 'failed');
  const send = sent
    ? step(`restart ${what}`, 'done', r?.commandId === undefined ? 'command sent' : `command ${r.commandId} sent`)
    : undelivered
      ? step(`restart ${what}`, 'failed', r?.detail ?? 'the command could not be delivered')
      : r?.status === 'claimed'
        ? step(`restart ${what}`, 'pending', 'claimed but not sent')
        : step(`restart ${what}`, 'not-reached', '');
  const result = written.has('RESTART_RESULT')
    ? step('restart result', 'done', 'the command succeeded')
    : written.has('RESTART_FAILED') || r?.status === 'failed'
      ? step('restart result', 'failed', r?.detail ?? 'the command failed')
      : sent
        ? step('restart result', 'pending', 'waiting for the command result')
        : step('restart result', 'not-reached', '');
  return [send, result];
};

const failoverSteps = (facts: ReplayFacts, open: Incident | null): PlanStep[] => {
  const { written, leader, event } = facts;
  const f = open?.failover ?? null;
  const to = f?.to ?? event.newPrimary;
  const started = written.has('FAILOVER_STARTED') || f !== null;
  const promoted = written.has('PROMOTED') || (to !== undefined && leader?.primary === to && f !== null && leader.epoch > f.fromEpoch);
  const steps: PlanStep[] = [];
  if (!started) {
    steps.push(written.has('NO_STANDBY') ? step('choose a standby', 'failed', 'no ready standby (or within the cooldown)') : step('choose a standby', 'not-reached', ''));
    return steps;
  }
  steps.push(step('choose a standby', 'done', to === undefined ? 'failover started' : `failing over to ${to}`));
  if (written.has('OLD_PRIMARY_STOPPED')) steps.push(step('stop the old primary', 'done', 'worker stopped before the handover'));
  else if (f?.outgoingStopped === true) steps.push(step('stop the old primary', 'skipped', 'its instance is stopped'));
  else steps.push(step('stop the old primary', promoted ? 'skipped' : 'pending', promoted ? 'not confirmed; the old primary fences itself when its lease lapses' : 'not confirmed yet'));
  steps.push(promoted ? step('promote the standby', 'done', `${to ?? '?'} is primary`) : step('promote the standby', f?.status === 'failed' ? 'failed' : 'pending', f?.detail ?? ''));
  if (facts.dns) steps.push(written.has('RECORD_CHANGED') ? step('move traffic', 'done', 'origin record changed') : step('move traffic', promoted ? 'pending' : 'not-reached', ''));
  else steps.push(step('move traffic', 'skipped', 'no origin record configured (Route 53 health checks move data-plane traffic)'));
  return steps;
};

const ladderSteps = (facts: ReplayFacts, kind: ReplayPlan['incident'], open: Incident | null, isOpen: boolean): PlanStep[] => {
  const { written } = facts;
  const closed = (detail: string): PlanStep => step('close the incident', isOpen ? 'pending' : 'done', isOpen ? detail : written.has('RECOVERED') ? 'recovered' : 'closed');
  switch (kind) {
    case 'stall': {
      const steps = [step('detect the stall', 'done', 'STALLED'), ...restartSteps(facts, open, 'the worker')];
      const escalated = written.has('STILL_STALLED') || open?.escalated === true || written.has('FAILOVER_STARTED') || written.has('NO_STANDBY') || open?.restart?.status === 'failed';
      if (escalated) steps.push(...failoverSteps(facts, open));
      steps.push(closed('waiting for healthy samples or escalation'));
      return steps;
    }
    case 'dead':
      return [step('detect the dead node', 'done', 'NODE_DEAD'), ...failoverSteps(facts, open), closed('failover not complete')];
    case 'agent':
      return [step('detect the silent agent', 'done', 'AGENT_DEAD'), ...restartSteps(facts, open, 'the agent'), closed('waiting for the agent to report again')];
    case 'standby':
      return [step('detect the lost standby', 'done', 'REDUNDANCY_LOST'), step('bring the standby back', isOpen ? 'pending' : 'done', isOpen ? 'a person acts (docs/runbook.md)' : 'heard from again')];
    case 'manual':
      return [step('manual failover', written.has('PROMOTED') ? 'done' : 'pending', facts.event.summary)];
    case 'alert':
      return [step(`alert ${facts.event.kind}`, 'done', 'raised by a node; nothing to replay (docs/runbook.md)')];
  }
};

/** The action that resumes an open incident, or why there is none. */
const resumption = (facts: ReplayFacts, incident: Incident): Pick<ReplayPlan, 'verdict' | 'reason' | 'action'> => {
  const { leader } = facts;
  const f = incident.failover;
  // A fresh claim is the watchdog's, in flight: taking it over would run the step twice.
  const fresh = (claimedAt: number): boolean => facts.now - claimedAt <= facts.claimStaleMs;
  const inFlight = (what: string, claimedAt: number): Pick<ReplayPlan, 'verdict' | 'reason' | 'action'> => ({
    verdict: 'watchdog-owns',
    reason: `${what} was claimed ${Math.round((facts.now - claimedAt) / 1000)} s ago and is in flight; a replay may resume it once it is ${Math.round(facts.claimStaleMs / 1000)} s old`,
    action: null,
  });
  if (f?.status === 'claimed') {
    if (fresh(f.claimedAt)) return inFlight(`the failover to ${f.to}`, f.claimedAt);
    return { verdict: 'resume', reason: `failover to ${f.to} was claimed and not finished`, action: { kind: 'resume-failover', step: f } };
  }
  if (f?.status === 'failed') {
    if (leader === null || leader.primary !== facts.event.node) return { verdict: 'refused', reason: `the role is no longer with ${facts.event.node}`, action: null };
    const to = facts.ready[0];
    if (to === undefined) return { verdict: 'refused', reason: 'the failover failed and no standby is ready now; bring one back or use `fleet failover --to NODE --force`', action: null };
    return { verdict: 'resume', reason: `the failover failed (${f.detail ?? 'no detail'}); retry to ${to}`, action: { kind: 'retry-failover', to, fromEpoch: leader.epoch } };
  }
  const r = incident.restart;
  if (r?.status === 'claimed') {
    if (fresh(r.claimedAt)) return inFlight('the restart', r.claimedAt);
    return { verdict: 'resume', reason: 'the restart was claimed but never sent', action: { kind: 'send-restart', command: r.command, claimedAt: r.claimedAt } };
  }
  if (r?.status === 'sent' && r.commandId !== undefined) {
    return { verdict: 'resume', reason: 'the restart was sent; its result is not recorded', action: { kind: 'verify-restart', commandId: r.commandId, deadline: (r.sentAt ?? r.claimedAt) + facts.restartVerifyMs } };
  }
  return { verdict: 'watchdog-owns', reason: 'every step so far is done; the watchdog judges the next samples (recovery or escalation)', action: null };
};

/**
 * The plan of a replay. Guarded by the epoch the event names: an incident of an older epoch
 * than the fleet's is refused (its decisions were about a primary that no longer holds the
 * role), unless this incident's own failover made the current epoch, which is then complete.
 */
export const planReplay = (facts: ReplayFacts): ReplayPlan => {
  const { event, leader, watch } = facts;
  const open = watch?.incident?.id === event.incidentId ? watch.incident : null;
  const kind = incidentKindOf(facts, open);
  const base = {
    eventId: event.id,
    incidentId: event.incidentId,
    node: event.node,
    incident: kind,
    epoch: event.epoch,
    current: { primary: leader?.primary ?? null, epoch: leader?.epoch ?? null },
    open: open !== null,
    steps: ladderSteps(facts, kind, open, open !== null),
  };
  if (kind === 'alert' || kind === 'manual') return { ...base, verdict: 'nothing-to-do', reason: 'not a watchdog incident: nothing to resume', action: null };
  if (leader === null) return { ...base, verdict: 'refused', reason: 'leader.json is missing or unreadable: the epoch guard cannot be checked, nothing is resumed', action: null };
  const current = leader.epoch;
  // This incident's own promotion moved the epoch on by one: that is completion, not supersession.
  const ownFailover = facts.written.has('PROMOTED') && current === event.epoch + 1;
  if (current !== event.epoch && !ownFailover) {
    return {
      ...base,
      verdict: 'refused',
      reason: `the event names epoch ${event.epoch} but the fleet is at epoch ${current} (primary ${leader.primary}): the incident was superseded, nothing is resumed. Use \`fleet failover\` for a new decision.`,
      action: null,
    };
  }
  if (open === null) {
    const other = watch?.incident;
    const how = ownFailover ? `the failover made epoch ${current}` : facts.written.has('RECOVERED') ? `${event.node} recovered` : 'no longer open';
    const reason = other !== null && other !== undefined ? `closed (${how}); ${event.node} now has incident ${other.id}` : `closed: ${how}`;
    return { ...base, verdict: 'nothing-to-do', reason, action: null };
  }
  return { ...base, ...resumption(facts, open) };
};
