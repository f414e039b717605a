import type { FailoverPlan, Incident, IncidentKind, RestartRecord } from './incident';

/** What an open incident waits for, from its stage alone (the other half of the machine in incident.ts). Pure. */

/** Timing the pending actions depend on. */
export interface Timing {
  /** How long a sent restart's result is awaited; a claim older than this was never sent. */
  restartVerifyMs: number;
}

/** The one thing an open incident waits for, by its stage. */
export type Pending =
  /** Send the claimed restart; `overdue` once the claim is older than the verification window (it was never sent). */
  | { kind: 'send-restart'; command: RestartRecord['command']; claimedAt: number; overdue: boolean }
  /** Read the sent restart's result until `deadline`. */
  | { kind: 'verify-restart'; commandId: string; deadline: number }
  /** Choose a ready standby and claim the failover to it. */
  | { kind: 'choose-standby'; noStandbyAlerted: boolean }
  /** Carry out the claimed failover (every step is idempotent). */
  | { kind: 'carry-out-failover'; failover: FailoverPlan }
  /** Retry the failed failover (a replay, or a person). */
  | { kind: 'retry-failover'; failover: FailoverPlan; detail: string }
  /** Nothing: the samples (a stall), the node's return (a standby) or the lease (a silent primary) decide. */
  | { kind: 'none'; why: string };

/** A restart sent and not yet resolved: its result is read whatever stage the incident is in. */
export const outstandingRestart = (
  incident: Incident,
  timing: Timing,
): Extract<Pending, { kind: 'verify-restart' }> | null => {
  const r = incident.restart;
  if (r === null || r.commandId === undefined || r.finishedAt !== undefined) return null;
  return {
    kind: 'verify-restart',
    commandId: r.commandId,
    deadline: (r.sentAt ?? r.claimedAt) + timing.restartVerifyMs,
  };
};

/**
 * The worker process the incident's restart replaces, or null: none was named, or the restart
 * did not happen. Until its replacement reports, that worker's own samples cannot show the
 * restart worked.
 */
export const replacedWorker = (incident: Incident): string | null => {
  const r = incident.restart;
  return r === null || r.worker === undefined || r.failed === true ? null : r.worker;
};

/** What a watching incident waits for, by its kind. */
const WATCHING: Record<IncidentKind, string> = {
  stall: 'the next samples decide: recovery or escalation',
  dead: 'waiting for the node to be heard from again',
  standby: 'waiting for the node to be heard from again',
  rejoin: "the worker's self-test decides: rejoined, or failed a window after its restart",
};

/** `next(stage, inputs, now)`: the pending action of an open incident. */
export const next = (incident: Incident, timing: Timing, now: number): Pending => {
  const { stage, restart } = incident;
  switch (stage.name) {
    case 'restart-claimed':
      return {
        kind: 'send-restart',
        command: restart?.command ?? 'restartWorker',
        claimedAt: restart?.claimedAt ?? incident.openedAt,
        overdue: now - (restart?.claimedAt ?? incident.openedAt) > timing.restartVerifyMs,
      };
    case 'restart-sent':
      return (
        outstandingRestart(incident, timing) ?? { kind: 'none', why: 'the restart was sent; its result is recorded' }
      );
    case 'escalating':
      return { kind: 'choose-standby', noStandbyAlerted: stage.noStandbyAlerted };
    case 'failing-over':
      return { kind: 'carry-out-failover', failover: stage.failover };
    case 'failover-failed':
      return { kind: 'retry-failover', failover: stage.failover, detail: stage.detail };
    case 'watching':
      return { kind: 'none', why: WATCHING[incident.kind] };
    case 'silent':
      return {
        kind: 'none',
        why: 'nothing confirms the node is gone: its lease decides, and traffic follows the lease',
      };
  }
};
