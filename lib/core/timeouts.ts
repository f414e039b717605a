import type { Config } from './config';

/**
 * The most receives an hour of outage can cost a task that never failed: a worker receives
 * nothing while its tasks wait out an outage, but where SQS lets it receive and not extend, the
 * message comes back once a visibility timeout; each failover hands it back once more (at most
 * one a cooldown); and each real failure before the last starts a new message. An hour is an
 * hour of the configuration's own time (a drill runs it faster).
 */
export const outageHourReceives = (
  c: Pick<Config, 'visibilityTimeoutSeconds' | 'failoverCooldownSeconds' | 'maxTaskFailures' | 'timeScale'>,
): number => {
  const hour = 3600 / c.timeScale;
  return (
    Math.ceil(
      hour / c.visibilityTimeoutSeconds + hour / Math.max(c.failoverCooldownSeconds, c.visibilityTimeoutSeconds),
    ) + c.maxTaskFailures
  );
};

/**
 * Connection and request timeouts of a node's AWS clients: a request sent under the lease is
 * answered or abandoned within 90% of the lease's margin (a renewal period: the time between the
 * primary's fence and a standby's takeover). At least a second of real time, so a time-scaled
 * drill on a loaded machine does not abandon healthy requests; on AWS the margin is far above it.
 */
export const clientTimeouts = (c: Pick<Config, 'leaseRenewSeconds'>): { connectionMs: number; requestMs: number } => {
  const requestMs = Math.max(1000, 900 * c.leaseRenewSeconds);
  return { connectionMs: Math.min(3000, requestMs), requestMs };
};
