import type { Heartbeat, StoreName } from '../schemas';
import type { NodeWatch } from './watchdog-state';

/**
 * Membership: whether a node that does not hold the lease is still with the fleet. One rule,
 * on the watchdog's own clock: a node is lost once its newest sample has not changed for
 * 2 × max(sample interval, schedule period). The holder of the lease is judged by the lease.
 */

/** A node's agent boot and the sequence number of one of its samples. */
export interface SampleRef {
  boot: string;
  seq: number;
}

/** A beat as read (`nodes/<node>/beat`): the newest sample of a node that is not the primary. */
export interface BeatRef extends SampleRef {
  unreachable?: readonly StoreName[];
}

export type Beats = ReadonlyMap<string, BeatRef>;

/** How long a node's newest sample may stay unchanged before the node is lost. */
export const lostAfterMs = (s: { sampleIntervalSeconds: number; watchdogScheduleSeconds?: number }): number =>
  2 * 1000 * Math.max(s.sampleIntervalSeconds, s.watchdogScheduleSeconds ?? 60);

/** The newest sample the heartbeat or the beat shows; the beat's when its boot differs (it is written every sample). */
export const newestSample = (hb: Heartbeat | undefined, beat: SampleRef | undefined): SampleRef | null => {
  const seq = hb === undefined ? -1 : Math.max(...hb.samples.map((s) => s.seq));
  const fromHeartbeat = hb === undefined ? null : { boot: hb.boot, seq };
  if (beat === undefined) return fromHeartbeat;
  if (fromHeartbeat === null || beat.boot !== fromHeartbeat.boot || beat.seq > seq)
    return { boot: beat.boot, seq: beat.seq };
  return fromHeartbeat;
};

/** Records the node's newest sample; its clock starts again only when the sample changed. */
export const observe = (watch: NodeWatch, newest: SampleRef | null, now: number): NodeWatch => {
  const known = watch.newest;
  if (newest === null || (known !== null && known.boot === newest.boot && known.seq === newest.seq)) return watch;
  return { ...watch, newest: { ...newest, changedAt: now } };
};

/** Lost: a node once heard from whose newest sample has not changed for `lostMs`. */
export const isLost = (watch: NodeWatch, now: number, lostMs: number): boolean =>
  watch.newest !== null && now - watch.newest.changedAt >= lostMs;

/**
 * After a run that could not see, every clock starts again from now: what the watchdog did not
 * watch proves nothing. A node already judged lost stays so until its own sample changes.
 */
export const restartClocks = (watches: Readonly<Record<string, NodeWatch>>, now: number): Record<string, NodeWatch> =>
  Object.fromEntries(
    Object.entries(watches).map(([name, w]) => {
      const judged = w.incident !== null && (w.incident.kind === 'standby' || w.incident.kind === 'dead');
      return [name, judged || w.newest === null ? w : { ...w, newest: { ...w.newest, changedAt: now } }];
    }),
  );
