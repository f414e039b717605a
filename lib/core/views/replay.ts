import type { Incident } from '../fleet/incident';
import { next, outstandingRestart } from '../fleet/incident-pending';
import { incidentKindOf, ladderSteps, whereOf, type ReplayFacts, type ReplayPlan } from './replay-steps';

export type { PlanStep, ReplayAction, ReplayFacts, ReplayPlan, StepStatus } from './replay-steps';

/** The action that resumes an open incident: the machine's pending action, unless the watchdog owns it. */
const resumption = (facts: ReplayFacts, incident: Incident): Pick<ReplayPlan, 'verdict' | 'reason' | 'action'> => {
  const { leader } = facts;
  // A fresh claim is the watchdog's, in flight: taking it over would run the step twice.
  const fresh = (claimedAt: number): boolean => facts.now - claimedAt <= facts.claimStaleMs;
  const inFlight = (what: string, claimedAt: number): Pick<ReplayPlan, 'verdict' | 'reason' | 'action'> => ({
    verdict: 'watchdog-owns',
    reason:
      `${what} was claimed ${Math.round((facts.now - claimedAt) / 1000)} s ago and is in flight; a replay may ` +
      `resume it once it is ${Math.round(facts.claimStaleMs / 1000)} s old`,
    action: null,
  });
  const pending = next(incident, { restartVerifyMs: facts.restartVerifyMs }, facts.now);
  const verify = outstandingRestart(incident, { restartVerifyMs: facts.restartVerifyMs });
  switch (pending.kind) {
    case 'carry-out-failover': {
      const f = pending.failover;
      if (fresh(f.claimedAt)) return inFlight(`the failover to ${f.to}`, f.claimedAt);
      return {
        verdict: 'resume',
        reason: `failover to ${f.to} was claimed and not finished`,
        action: { kind: 'resume-failover', step: f },
      };
    }
    case 'retry-failover': {
      if (leader === null || leader.primary !== facts.event.node)
        return { verdict: 'refused', reason: `the role is no longer with ${facts.event.node}`, action: null };
      const to = facts.ready[0];
      if (to === undefined)
        return {
          verdict: 'refused',
          reason:
            'the failover failed and no standby is ready now; bring one back or use ' +
            '`fleet failover --to NODE --ignore-readiness`',
          action: null,
        };
      return {
        verdict: 'resume',
        reason: `the failover failed (${pending.detail}); retry to ${to}`,
        action: { kind: 'retry-failover', to, fromEpoch: leader.epoch },
      };
    }
    case 'send-restart':
      if (fresh(pending.claimedAt)) return inFlight('the restart', pending.claimedAt);
      return {
        verdict: 'resume',
        reason: 'the restart was claimed but never sent',
        action: { kind: 'send-restart', command: pending.command, claimedAt: pending.claimedAt },
      };
    default:
      if (verify !== null)
        return {
          verdict: 'resume',
          reason: 'the restart was sent; its result is not recorded',
          action: { kind: 'verify-restart', commandId: verify.commandId, deadline: verify.deadline },
        };
      return {
        verdict: 'watchdog-owns',
        reason:
          pending.kind === 'choose-standby'
            ? 'a failover is wanted; the watchdog claims it once a standby is ready and the cooldown allows'
            : `every step so far is ` +
              `done; ${pending.kind === 'none' ? pending.why : 'the watchdog judges the next samples'}`,
        action: null,
      };
  }
};

/**
 * The plan of a replay. Guarded by the epoch the event names: an incident of an older epoch
 * than the fleet's is refused (its decisions were about a primary that no longer holds the
 * role), unless this incident's own failover made the current epoch, which is then complete.
 */
export const planReplay = (facts: ReplayFacts): ReplayPlan => {
  const { event, leader, watch } = facts;
  const open = watch?.incident?.id === event.incidentId ? watch.incident : null;
  const where = whereOf(facts, open);
  const kind = incidentKindOf(facts, open, where);
  const base = {
    eventId: event.id,
    incidentId: event.incidentId,
    node: event.node,
    incident: kind,
    epoch: event.epoch,
    current: { primary: leader?.primary ?? null, epoch: leader?.epoch ?? null },
    open: open !== null,
    steps: ladderSteps(facts, kind, open, where),
  };
  if (kind === 'alert' || kind === 'manual')
    return { ...base, verdict: 'nothing-to-do', reason: 'not a watchdog incident: nothing to resume', action: null };
  if (leader === null)
    return {
      ...base,
      verdict: 'refused',
      reason: 'leader.json is missing or unreadable: the epoch guard cannot be checked, nothing is resumed',
      action: null,
    };
  const current = leader.epoch;
  // This incident's own promotion moved the epoch on by one: that is completion, not supersession.
  const ownFailover = facts.written.has('PROMOTED') && current === event.epoch + 1;
  if (current !== event.epoch && !ownFailover) {
    return {
      ...base,
      verdict: 'refused',
      reason:
        `the event names epoch ${event.epoch} but the fleet is at epoch ${current} ` +
        `(primary ${leader.primary}): the incident was superseded, nothing is resumed. Use \`fleet failover\` for a ` +
        `new decision.`,
      action: null,
    };
  }
  if (open === null) {
    const other = watch?.incident;
    const how = ownFailover
      ? `the failover made epoch ${current}`
      : facts.written.has('RECOVERED')
        ? `${event.node} recovered`
        : 'no longer open';
    const reason =
      other !== null && other !== undefined
        ? `closed (${how}); ${event.node} now has incident ${other.id}`
        : `closed: ${how}`;
    return { ...base, verdict: 'nothing-to-do', reason, action: null };
  }
  return { ...base, ...resumption(facts, open) };
};
