import type { Leader, SwitchoverRequest } from '../schemas';
import { isPaused } from '../fleet/maintenance';
import { planManualFailover, type ManualFailoverInput } from './manual-failover';

/** Record the request (for the primary of this epoch), refuse, or reject the arguments. */
export type SwitchoverPlan =
  | { kind: 'unknown-node'; message: string }
  | { kind: 'refuse'; message: string }
  | { kind: 'go'; from: string; fromEpoch: number; to: string; id: string; overridden: string[] };

/**
 * Decides `fleet switchover --to NODE`: the same checks as a manual failover (a configured node
 * other than the primary, ready by the watchdog's rule, no watchdog step in flight on the primary,
 * unless `--ignore-readiness`), and, whatever the flag says, never while the fleet is paused or the
 * target cordoned (the primary would drop it), nor over another request still pending.
 */
export const planSwitchover = (input: ManualFailoverInput): SwitchoverPlan => {
  const { to, leader, watchdog, now } = input;
  const maintenance = watchdog.state === 'ok' ? watchdog.value.maintenance : undefined;
  if (input.nodes.some((n) => n.name === to)) {
    if (isPaused(maintenance))
      return { kind: 'refuse', message: 'the fleet is paused: no switchover until fleet resume' };
    if (maintenance?.cordoned[to] !== undefined)
      return { kind: 'refuse', message: `${to} is cordoned: no switchover to it until fleet uncordon ${to}` };
    const current = leader.state === 'ok' ? leader.value : null;
    const pending = current?.switchover;
    if (pending !== undefined && pending.epoch === current?.epoch)
      return {
        kind: 'refuse',
        message: `switchover ${pending.id} to ${pending.to} is pending: fleet switchover --cancel withdraws it`,
      };
  }
  const plan = planManualFailover(input);
  if (plan.kind !== 'go') return plan;
  const id = `sw-${plan.fromEpoch}-${now}-${input.nonce}`;
  return { kind: 'go', from: plan.from, fromEpoch: plan.fromEpoch, to, id, overridden: plan.overridden };
};

/** The request as recorded on `leader.json`. */
export const switchoverRequest = (
  plan: Extract<SwitchoverPlan, { kind: 'go' }>,
  by: string,
  reason: string,
): SwitchoverRequest => ({
  id: plan.id,
  to: plan.to,
  epoch: plan.fromEpoch,
  by: by.slice(0, 200),
  reason: (reason + (plan.overridden.length > 0 ? ' (--ignore-readiness)' : '')).slice(0, 300),
});

/** How a request ended, read from the record: handed over (and how), dropped by the primary, or not yet. */
export type SwitchoverOutcome =
  | { kind: 'handed-over'; to: string; epoch: number; handover: Leader['handover']; reason: string }
  | { kind: 'moved'; primary: string; epoch: number }
  | { kind: 'dropped' }
  | { kind: 'pending' };

export const switchoverOutcome = (id: string, fromEpoch: number, now: Leader | null): SwitchoverOutcome => {
  if (now === null) return { kind: 'dropped' };
  if (now.epoch > fromEpoch) {
    // The epoch after the request's, written by the old primary itself with the request's id: its handover.
    if (now.epoch === fromEpoch + 1 && now.reason.startsWith(`switchover ${id}:`))
      return { kind: 'handed-over', to: now.primary, epoch: now.epoch, handover: now.handover, reason: now.reason };
    return { kind: 'moved', primary: now.primary, epoch: now.epoch };
  }
  return now.switchover?.id === id ? { kind: 'pending' } : { kind: 'dropped' };
};
