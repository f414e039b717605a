import { wholeSeconds, type Config } from '../../lib/core/config';
import { nextRenewalAt } from '../../lib/core/fleet/lease';
import type { RoleFile } from '../registry';

type PollConfig = Pick<Config, 'leaseRenewSeconds' | 'leaseExpirySeconds' | 'receiveWaitSeconds' | 'timeScale'>;

/** What the worker's poll loop does next: a long poll of `waitSeconds`, a wait for the renewal, or idle. */
export type PollStep =
  { kind: 'receive'; waitSeconds: number } | { kind: 'await-renewal'; ms: number } | { kind: 'idle' };

/**
 * A long poll must end before the lease does: no message is handed out after it. SQS waits whole
 * seconds (whole seconds of the drill's time when it runs faster). A poll cut short by the lease's
 * end is one more request a renewal period (a 10 s poll where 20 s were allowed): when the next
 * renewal is due within a quarter period, the worker waits for it (the role file then says so)
 * and asks for the whole wait. A renewal late by more than that is not waited for.
 */
export const pollStep = (role: RoleFile | null, free: number, now: number, c: PollConfig): PollStep => {
  if (role === null) return { kind: 'idle' };
  const cap = wholeSeconds((role.validUntil - now) / 1000 - c.leaseRenewSeconds / 10, c.timeScale);
  const renewMs = c.leaseRenewSeconds * 1000;
  const renewalIn = nextRenewalAt(role.validUntil, { renewMs, expiryMs: c.leaseExpirySeconds * 1000 }) - now;
  if (free > 0 && cap < c.receiveWaitSeconds && renewalIn <= renewMs / 4 && renewalIn > -renewMs / 4) {
    return { kind: 'await-renewal', ms: Math.max(0, renewalIn) + renewMs / 20 };
  }
  if (free <= 0 || cap < 1 / c.timeScale) return { kind: 'idle' };
  return { kind: 'receive', waitSeconds: wholeSeconds(Math.min(c.receiveWaitSeconds, cap), c.timeScale) };
};
