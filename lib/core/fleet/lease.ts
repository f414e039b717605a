import type { Leader } from '../schemas';

/**
 * The primary role as a lease on `leader.json`, decided by pure functions so the agent, the
 * watchdog and a property test share one protocol.
 *
 * - Only compare-and-swap changes the record; the epoch only grows.
 * - Expiry is measured by each observer's own monotonic clock from the moment it first saw
 *   the current version, never from a timestamp another machine wrote.
 * - The primary renews every `renewMs` and may consume until `fenceAfter` past the send time
 *   of its last successful renewal. `fenceAfter` is one renewal shorter than the expiry a
 *   standby waits, so the old primary has stopped before anyone can take over by expiry.
 */
export interface LeaseTiming {
  /** The primary renews, and a standby reads the record, this often. */
  renewMs: number;
  expiryMs: number;
}

/** How long a primary may consume after sending its last successful renewal. */
export const fenceAfterMs = (t: LeaseTiming): number => t.expiryMs - t.renewMs;

/** When the primary sends its next renewal, by the clock of `validUntil` (roleOf's). */
export const nextRenewalAt = (validUntil: number, t: LeaseTiming): number => validUntil - fenceAfterMs(t) + t.renewMs;

/**
 * When the primary sends its next renewal: a renewal period after the last good one was sent,
 * however long its answer took (validity counts from the send), and a quarter period after a
 * failed attempt, so a failure is retried well within the lease without spinning.
 */
export const renewalDueAt = (renewOkAt: number | null, lastAttemptAt: number | null, t: LeaseTiming): number => {
  const afterGood = renewOkAt === null ? -Infinity : renewOkAt + t.renewMs;
  const afterAttempt = lastAttemptAt === null ? -Infinity : lastAttemptAt + t.renewMs / 4;
  return Math.max(afterGood, afterAttempt);
};

/** What one node knows of the record, timed by its own monotonic clock. */
export interface LeaseState {
  leader: Leader | null;
  etag: string | null;
  /** When this version (epoch, renewals) was first seen, or when observation began. */
  seenAt: number;
  /**
   * Since when every read of the record succeeded and showed this version: a standby's expiry
   * counts from here, so time it could not look (an S3 outage) never counts as silence.
   */
  quietSince: number;
  /** Where this epoch's handover wait counts from (see `release`). */
  fenceFrom: number;
  /** Send time of this node's last successful renewal in the current epoch. */
  renewOkAt: number | null;
  /** For a new primary: may it consume yet (see `release`)? */
  released: boolean;
  /** Was this node primary of an earlier epoch it no longer holds (shown as `fenced`)? */
  fenced: boolean;
  /** Did this node, named primary, give the role up (it stopped renewing and fenced itself: `resign`)? */
  resigned: boolean;
}

export const initialLease = (now: number): LeaseState => ({
  leader: null,
  etag: null,
  seenAt: now,
  quietSince: now,
  fenceFrom: now,
  renewOkAt: null,
  released: false,
  fenced: false,
  resigned: false,
});

/**
 * The primary gives the role up: it stops consuming at once and renews no more, so the lease
 * lapses and a standby takes it over as it takes any lapsed lease. For a node that cannot do
 * the work while another can (lib/core/fleet/step-down.ts).
 */
export const resign = (s: LeaseState): LeaseState => ({ ...s, resigned: true });

const sameVersion = (a: Leader | null, b: Leader | null): boolean =>
  a === null || b === null ? a === b : a.epoch === b.epoch && a.renewals === b.renewals && a.primary === b.primary;

/** True when `next` was written over exactly the version `seen`: the promoter replaced what this node last saw. */
const replacesSeen = (next: Leader, seen: Leader | null): boolean =>
  seen !== null &&
  next.replaces !== undefined &&
  next.replaces.epoch === seen.epoch &&
  next.replaces.renewals === seen.renewals &&
  next.previous === seen.primary;

/** Folds a successful read (or write) of the record into the node's state. */
export const observeLeader = (
  me: string,
  s: LeaseState,
  leader: Leader | null,
  etag: string | null,
  now: number,
): LeaseState => {
  // The same version with another ETag carries an operator's switchover request (or its removal):
  // the record is taken, but it is no renewal, so no expiry clock starts again.
  if (sameVersion(s.leader, leader)) return { ...s, leader, etag };
  const newEpoch = leader?.epoch !== s.leader?.epoch;
  const wasPrimary = s.leader?.primary === me;
  // The old primary's last renewal is the version the promoter replaced. If this node saw
  // that very version, it was written before `seenAt`, so the old lease lapses within an
  // expiry of `seenAt`; otherwise count from now, when this node first sees the new epoch.
  const fenceFrom = !newEpoch ? s.fenceFrom : leader !== null && replacesSeen(leader, s.leader) ? s.seenAt : now;
  return {
    leader,
    etag,
    seenAt: now,
    quietSince: now,
    fenceFrom,
    renewOkAt: newEpoch ? null : s.renewOkAt,
    released: newEpoch ? false : s.released,
    fenced: leader?.primary === me ? false : s.fenced || (newEpoch && wasPrimary),
    resigned: newEpoch ? false : s.resigned,
  };
};

/** A read that failed: until the record is seen again, silence proves nothing. */
export const observeFailure = (s: LeaseState, now: number): LeaseState => ({
  ...s,
  quietSince: Math.max(s.quietSince, now),
});

/** The record that makes `primary` the holder of the next epoch. */
export const nextEpoch = (
  current: Leader | null,
  primary: string,
  reason: string,
  changedBy: string,
  handover: Leader['handover'],
): Leader => ({
  version: 1,
  primary,
  epoch: (current?.epoch ?? 0) + 1,
  renewals: 0,
  reason: reason.slice(0, 500),
  changedBy: changedBy.slice(0, 128),
  previous: current?.primary ?? null,
  handover,
  ...(current === null ? {} : { replaces: { epoch: current.epoch, renewals: current.renewals } }),
});

/**
 * The handover a promoter may grant. `immediate` only when the outgoing primary is confirmed
 * stopped and its own record was immediate too: a record that was still waiting for its
 * predecessor to fence means that predecessor may still hold a valid lease.
 */
export const handoverFor = (current: Leader | null, outgoingConfirmedStopped: boolean): Leader['handover'] =>
  current === null || (outgoingConfirmedStopped && current.handover === 'immediate') ? 'immediate' : 'await-fence';

/** `handover`: the primary writes the next epoch naming the target of a switchover (fleet/switchover.ts). */
export type LeaseIntent =
  { kind: 'renew' | 'promote' | 'handover'; next: Leader; etag: string | null } | { kind: 'none' };

export interface SyncContext {
  timing: LeaseTiming;
  /**
   * Position among the standbys by priority (0 = first); later ones wait a renewal longer each,
   * and one that cannot reach the stores its work needs waits behind every node that can.
   */
  rank: number;
  /** This node could consume now (its worker is alive). */
  ready: boolean;
}

/** When this standby may take the lease: a full expiry (and its rank) of unbroken, unchanged reads. */
export const expiresAt = (s: LeaseState, ctx: Pick<SyncContext, 'timing' | 'rank'>): number =>
  s.quietSince + ctx.timing.expiryMs + ctx.rank * ctx.timing.renewMs;

/** True when this standby has seen no change of the record for a full expiry (and its rank). */
export const leaseExpired = (s: LeaseState, now: number, ctx: SyncContext): boolean => now >= expiresAt(s, ctx);

/** What the node should write this round: renew its own lease, take an expired one, or nothing. */
export const planSync = (me: string, s: LeaseState, now: number, ctx: SyncContext): LeaseIntent => {
  const leader = s.leader;
  if (leader !== null && leader.primary === me && !s.resigned) {
    // Once released, every earlier primary has lapsed: a restart of this node's agent need not
    // wait a whole lease again, so the renewal drops the handover wait from the record.
    const handover = s.released ? 'immediate' : leader.handover;
    return { kind: 'renew', next: { ...leader, renewals: leader.renewals + 1, handover }, etag: s.etag };
  }
  if (ctx.ready && leaseExpired(s, now, ctx)) {
    const why = leader === null ? 'no primary record' : `lease of ${leader.primary} (epoch ${leader.epoch}) expired`;
    return { kind: 'promote', next: nextEpoch(leader, me, `${why}: standby took over`, me, 'immediate'), etag: s.etag };
  }
  return { kind: 'none' };
};

/** Folds the outcome of a write the node attempted at `sentAt` (send time, its own clock). */
export const applyWrite = (
  me: string,
  s: LeaseState,
  intent: LeaseIntent,
  ok: boolean,
  newEtag: string | null,
  sentAt: number,
  now: number,
): LeaseState => {
  if (intent.kind === 'none' || !ok) return s;
  const next = observeLeader(me, s, intent.next, newEtag, now);
  // A lease taken because the old one expired by our own clock needs no handover wait.
  const released = intent.kind === 'promote' ? true : next.released;
  return { ...next, renewOkAt: sentAt, released };
};

/**
 * Releases a new primary: at once for an `immediate` record, otherwise once a full expiry has
 * passed since `fenceFrom`. Every earlier primary's last successful renewal was sent before
 * the version it counts from was written, so its lease has lapsed by then.
 */
export const release = (s: LeaseState, now: number, timing: LeaseTiming): LeaseState => {
  if (s.released || s.leader === null) return s;
  return s.leader.handover === 'immediate' || now - s.fenceFrom >= timing.expiryMs ? { ...s, released: true } : s;
};

/** When `release` will let this node consume, or null when nothing is waiting. */
export const releaseAt = (s: LeaseState, timing: LeaseTiming): number | null =>
  s.released || s.leader === null || s.leader.handover === 'immediate' ? null : s.fenceFrom + timing.expiryMs;

export type Role = 'primary' | 'pending' | 'standby' | 'fenced';

/** What the node tells its worker: the role, the epoch and until when it may consume. */
export const roleOf = (
  me: string,
  s: LeaseState,
  now: number,
  timing: LeaseTiming,
): { role: Role; epoch: number; validUntil: number } => {
  const epoch = s.leader?.epoch ?? 0;
  if (s.leader?.primary !== me || s.resigned) {
    return { role: s.fenced || s.resigned ? 'fenced' : 'standby', epoch, validUntil: 0 };
  }
  if (s.renewOkAt === null || !s.released) return { role: 'pending', epoch, validUntil: 0 };
  const validUntil = s.renewOkAt + fenceAfterMs(timing);
  return now < validUntil ? { role: 'primary', epoch, validUntil } : { role: 'fenced', epoch, validUntil: 0 };
};

/** The worker's own check before every receive and write: the agent's word, still valid by the clock. */
export const mayConsume = (role: { role: Role; validUntil: number }, now: number): boolean =>
  role.role === 'primary' && now < role.validUntil;
