import type { Heartbeat } from '../schemas';

/**
 * What an operator command found when it read one stored object. Missing and corrupt objects
 * are facts to show, not reasons to stop: a status with a damaged heartbeat still shows the rest.
 */
export type Observed<T> = { state: 'ok'; value: T } | { state: 'missing' } | { state: 'corrupt'; error: string };

/** The value when the object was read and valid, otherwise null. */
export const valueOf = <T>(o: Observed<T> | undefined): T | null => (o?.state === 'ok' ? o.value : null);

/** A node's heartbeat as read, with S3's Last-Modified time of the object (null when unknown). */
export interface HeartbeatObservation {
  heartbeat: Observed<Heartbeat>;
  writtenAt: number | null;
}
