import type { Leader } from '../schemas';
import type { WatchdogState } from './watchdog-state';

/**
 * Liveness of the primary: the lease alone. A standby's takeover of an expired lease is the
 * verdict on the node that held it; a lease nobody renews or takes over is judged by the
 * watchdog's own clock. Every other node is judged by membership (membership.ts).
 */

/** What Lightsail and SSM say of a node judged gone: the alert's detail, asked only then. */
export interface Confirmation {
  /** `stopped` only for stopped or terminated: a crashed or frozen VM still reads `running`. */
  instance: 'running' | 'stopping' | 'stopped' | 'unknown';
  ssm: 'online' | 'lost' | 'unknown';
}

/** `dead` when AWS confirms the machine is gone; `silent` when nothing says so yet. */
export type Silence = 'silent' | 'dead';

export const classify = (c: Confirmation | undefined): Silence =>
  c !== undefined && (c.instance === 'stopped' || c.ssm === 'lost') ? 'dead' : 'silent';

/** The lease as the watchdog last read it, and when it changed by the watchdog's clock. */
export type LeaseSeen = NonNullable<WatchdogState['lease']>;

/** Records the lease; its clock starts again whenever the record changed (a renewal, a new epoch). */
export const observeLease = (
  seen: LeaseSeen | undefined,
  leader: Leader | null,
  now: number,
): LeaseSeen | undefined => {
  if (leader === null) return seen;
  const same = seen?.primary === leader.primary && seen.epoch === leader.epoch && seen.renewals === leader.renewals;
  return same ? seen : { primary: leader.primary, epoch: leader.epoch, renewals: leader.renewals, changedAt: now };
};

/** The node whose expired lease a standby took over since the lease was last read, or null. */
export const takenOverFrom = (seen: LeaseSeen | undefined, leader: Leader | null): string | null => {
  if (seen === undefined || leader === null || leader.epoch <= seen.epoch) return null;
  const self = leader.changedBy === leader.primary;
  return self && leader.previous !== null && leader.previous !== leader.primary ? leader.previous : null;
};

/** How long a lease may stay unchanged before the watchdog alerts: its expiry and one schedule period. */
export const staleAfterMs = (s: { leaseExpirySeconds: number; watchdogScheduleSeconds?: number }): number =>
  1000 * (s.leaseExpirySeconds + (s.watchdogScheduleSeconds ?? 60));

/** Nobody renewed or took over the lease for `staleMs` by the watchdog's clock. */
export const leaseStale = (seen: LeaseSeen | undefined, now: number, staleMs: number): boolean =>
  seen !== undefined && now - seen.changedAt >= staleMs;
