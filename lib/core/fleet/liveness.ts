import type { NodeSpec } from '../config';
import type { Heartbeat, Leader, Sample, StoreName } from '../schemas';
import type { NodeWatch } from './watchdog-state';

/** Independent evidence about a silent node, gathered by the handler (Lightsail, SSM). */
export interface Confirmation {
  /** `stopped` only for Lightsail's stopped or terminated: a crashed or frozen VM reads `running`, a stop in progress `stopping`. */
  instance: 'running' | 'stopping' | 'stopped' | 'unknown';
  ssm: 'online' | 'lost' | 'unknown';
}

/**
 * What the silence of a node means: `dead` when AWS confirms the machine is gone (Lightsail
 * says stopped, or SSM lost its agent, which takes AWS minutes); `silent` when nothing says
 * so yet, as for a VM that crashed a minute ago: Lightsail still reports `running` then.
 */
export type Silence = 'none' | 'silent' | 'dead';

/** A node's agent boot and the sequence number of one of its samples. */
export interface SampleRef {
  boot: string;
  seq: number;
}

/** A beat item as read: the sample, and the stores the node said it could not reach. */
export interface BeatRef extends SampleRef {
  unreachable?: readonly StoreName[];
}

/** The beat items read this run (`nodes/<node>/beat`, written by each node while it is not the primary), by node. */
export type Beats = ReadonlyMap<string, BeatRef>;

/** The nodes whose beat says they cannot reach S3 or SQS: no failover goes to them. */
export const cannotWork = (beats: Beats | undefined): ReadonlySet<string> =>
  new Set([...(beats ?? new Map<string, BeatRef>()).entries()].filter(([, b]) => (b.unreachable ?? []).some((s) => s === 's3' || s === 'sqs')).map(([n]) => n));

/**
 * What says a node is alive besides its heartbeat object: the sample the lease's last renewal
 * carried when it holds the lease (`leader.beat`), its beat item, and the primary's word on how
 * long that node's beat has not changed (`leader.peers`).
 */
export interface Evidence {
  beats: readonly SampleRef[];
  quiet?: SampleRef & { quietMs: number };
  /**
   * When this run first read the record that says `quiet` (the watchdog's clock; now if absent):
   * the quiet held by then, so a run that waited and reads the same record again counts the
   * wait on top of it, not from its second look.
   */
  at?: number;
}

export const NO_EVIDENCE: Evidence = { beats: [] };

/** The sample the lease's last renewal carried, when `node` holds the lease (`leader.beat`). */
export const beatOf = (leader: Leader | null | undefined, node: string): Leader['beat'] => (leader?.primary === node ? leader.beat : undefined);

/** Everything this run read that speaks for `node`'s liveness, besides its heartbeat. */
export const evidenceOf = (leader: Leader | null | undefined, node: string, beats?: Beats, readAt?: number): Evidence => {
  const found = [beatOf(leader, node), beats?.get(node)].filter((b): b is SampleRef => b !== undefined);
  const quiet = leader?.primary === node ? undefined : leader?.peers?.[node];
  if (quiet === undefined) return { beats: found };
  return readAt === undefined ? { beats: found, quiet } : { beats: found, quiet, at: readAt };
};

/**
 * The newest sample a node is known to have taken: its heartbeat's newest, or a newer one of the
 * same agent boot that a beat says it took (the lease's for the primary, the beat item's for a
 * standby); the boot is the heartbeat's or, when the heartbeat cannot be read (damaged), the one
 * last seen. Nodes rewrite their heartbeats only when they have news; their beats say they are alive.
 */
export const newestSample = (hb: Heartbeat | undefined, beats: readonly SampleRef[] = [], knownBoot?: string): SampleRef | null => {
  const boot = hb?.boot ?? knownBoot;
  if (boot === undefined) return null;
  const seq = beats.reduce((m, b) => (b.boot === boot ? Math.max(m, b.seq) : m), hb?.samples.reduce((m, s) => Math.max(m, s.seq), -1) ?? -1);
  return seq < 0 ? null : { boot, seq };
};

/**
 * Records the newest sample known of the node (newestSample), timed by the watchdog's own clock;
 * when the primary says that very sample has been the node's newest for `quietMs` (its own
 * monotonic clock, between two of its reads: a duration on one machine, not a time compared
 * across two), it was heard that long before this run first read that word, at the latest
 * (for a newer sample of its heartbeat, see quietOf). The watchdog runs about once a minute,
 * the primary reads beats every renewal: this is how a lost standby is judged in time.
 */
export const updateSeen = (watch: NodeWatch, hb: Heartbeat | undefined, now: number, evidence: Evidence = NO_EVIDENCE): NodeWatch => {
  const newest = newestSample(hb, evidence.beats, watch.seen?.boot);
  if (newest === null) return watch;
  const seen = watch.seen;
  const fresh = seen !== null && seen.boot === newest.boot && seen.seq >= newest.seq ? seen : { ...newest, at: now };
  const quiet = quietOf(fresh, hb, evidence.quiet);
  const quietSince = quiet === null ? Infinity : Math.min(now, evidence.at ?? now) - quiet;
  if (quietSince < fresh.at) return { ...watch, seen: { ...fresh, at: quietSince } };
  return fresh === seen ? watch : { ...watch, seen: fresh };
};

/**
 * How long ago `fresh` was taken at the latest, by the quiet a primary reported (null: it says
 * nothing). Of the very sample it reported, its quiet time. Of a newer one of the same boot
 * (the node's heartbeat object has a sample its beat never carried: a primary that wrote its
 * heartbeat after its last renewal, then died), that quiet time less how long after the
 * reported sample the node took it, both samples in its heartbeat by its own monotonic clock:
 * durations each on one machine, never a comparison of two clocks. A node whose loop was held
 * up (frozen) took the newer sample that much later, so it is credited that much less.
 */
const quietOf = (fresh: SampleRef, hb: Heartbeat | undefined, q: Evidence['quiet']): number | null => {
  if (q === undefined || q.boot !== fresh.boot || q.seq > fresh.seq) return null;
  if (q.seq === fresh.seq) return q.quietMs;
  if (hb?.boot !== fresh.boot) return null;
  const reported = hb.samples.find((s) => s.seq === q.seq)?.mono;
  const newer = hb.samples.find((s) => s.seq === fresh.seq)?.mono;
  if (reported === undefined || newer === undefined || newer < reported) return null;
  const quiet = q.quietMs - (newer - reported);
  return quiet > 0 ? quiet : null;
};

/** Silent: no new sample for two sample intervals by the watchdog's clock. Never seen is not silent. */
export const isSilent = (watch: NodeWatch, now: number, sampleMs: number): boolean => watch.seen !== null && now - watch.seen.at >= 2 * sampleMs;

/**
 * How long to wait for a node that has missed one heartbeat to reach the silence threshold,
 * or null. Without it, the verdict on a dead node waits for the next trigger (up to a sample
 * interval later); with it, one invocation sleeps at most one interval, only in that case.
 * A node the primary reports quiet for two intervals (`leader.peers`: the node whose lapsed
 * lease it took over, or a standby it no longer hears) is waited for from a renewal period short
 * of an interval: when its heartbeat holds a sample newer than the one reported (credited less,
 * quietOf), the run a takeover triggers finds that sample about an interval old, and otherwise
 * left the verdict to a later trigger (a CI run's came 64.2 s after the kill).
 * A primary whose renewals carry its samples is late only a renewal period later: a renewal
 * carries the sample taken up to `renewMs` before it, so a live one's samples arrive up to that
 * much apart beyond the interval, and waiting for them would bill a sleep in many runs.
 */
export const suspectWaitMs = (
  watches: Readonly<Record<string, NodeWatch>>,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  sampleMs: number,
  leader?: Leader | null,
  renewMs = 0,
  beats?: Beats,
): number | null => {
  let soonest: number | null = null;
  for (const [name, stored] of Object.entries(watches)) {
    const evidence = evidenceOf(leader, name, beats);
    const watch = updateSeen(stored, heartbeats.get(name), now, evidence);
    if (watch.seen === null) continue;
    const silentFor = now - watch.seen.at;
    const reportedQuiet = (evidence.quiet?.quietMs ?? 0) >= 2 * sampleMs;
    const lateAfter = reportedQuiet ? Math.max(0, sampleMs - renewMs) : beatOf(leader, name) === undefined ? sampleMs : Math.min(sampleMs + renewMs, 2 * sampleMs);
    if (silentFor < lateAfter || silentFor >= 2 * sampleMs) continue;
    const wait = 2 * sampleMs - silentFor;
    soonest = soonest === null ? wait : Math.min(soonest, wait);
  }
  return soonest;
};

/**
 * Silence of a node, and whether AWS confirms it. A stopped instance or an SSM agent that lost
 * its connection is a second opinion, independent of our agent and of S3: the node is gone.
 */
export const classifySilence = (silent: boolean, confirmation: Confirmation | undefined): Silence => {
  if (!silent) return 'none';
  return confirmation !== undefined && (confirmation.instance === 'stopped' || confirmation.ssm === 'lost') ? 'dead' : 'silent';
};

/**
 * What the watchdog could see this run: `failing` when its own runs failed until now (S3
 * refused it for an unknown time); otherwise `troubledSince`, the start of this run's look at
 * the heartbeats when those reads needed retries (a throttle, a lost response), or null.
 */
export interface Sight {
  failing: boolean;
  troubledSince: number | null;
  /** The beat items this run read (absent: none were read). */
  beats?: Beats;
  /**
   * The leader record this run read before it waited for a late node, and when: what it said of
   * the nodes' quiet held by then, so the wait counts on top of it (`seenBy`).
   */
  earlier?: { leader: Leader | null; at: number };
}

/**
 * updateSeen by everything the run read: the record it read before a wait (its word dated from
 * that read) and the one it judges by. A run that waited for a dead primary's last sample and
 * dated that sample by the word again from its second look found it exactly as far from
 * silent as before its wait.
 */
export const seenBy = (watch: NodeWatch, hb: Heartbeat | undefined, now: number, node: string, leader: Leader | null, sight: Pick<Sight, 'beats' | 'earlier'>): NodeWatch => {
  const before = sight.earlier === undefined ? watch : updateSeen(watch, hb, now, evidenceOf(sight.earlier.leader, node, sight.beats, sight.earlier.at));
  return updateSeen(before, hb, now, evidenceOf(leader, node, sight.beats));
};

export const CLEAR_SIGHT: Sight = { failing: false, troubledSince: null };

/**
 * Silence the watchdog did not see happen proves nothing: the time since `blindFrom` does not
 * count toward any node's silence. From -Infinity (an S3 outage, a watchdog outage: blind for
 * an unknown time) every node's silence counts again from now; from the start of a troubled
 * look, a node is credited only that look's time, so a throttled read costs a dead node's
 * verdict seconds, not two sample intervals (in a CI run a SlowDown 30 s into a killed agent's
 * silence once put its verdict 63.6 s after the kill).
 */
export const regainSight = (watches: Readonly<Record<string, NodeWatch>>, blindFrom: number, now: number): Record<string, NodeWatch> => {
  const credit = Math.max(0, now - blindFrom);
  return Object.fromEntries(
    Object.entries(watches).map(([name, w]) => {
      // A node already known silent stays so: only a new sample of its own may say it is back.
      const known = w.incident !== null && w.incident.kind !== 'stall';
      return [name, known || w.seen === null || w.seen.at >= now ? w : { ...w, seen: { ...w.seen, at: Math.min(now, w.seen.at + credit) } }];
    }),
  );
};

/** Sample intervals within which a standby's worker must have passed its self-test. */
export const PROOF_INTERVALS = 4;

/** The worker proved recently that it works (a self-test through its stages), by its sample. */
export const isProven = (last: { proofAgeMs?: number | null | undefined }, sampleMs: number): boolean =>
  last.proofAgeMs !== undefined && last.proofAgeMs !== null && last.proofAgeMs <= PROOF_INTERVALS * sampleMs;

/** What keeps a standby's worker from being ready, by one sample: no worker process, or no recent self-test. */
export type WorkerFault = 'no-worker' | 'unproven';

export const workerFault = (s: Sample, sampleMs: number): WorkerFault | null => (s.workerProcesses === 0 ? 'no-worker' : isProven(s, sampleMs) ? null : 'unproven');

/**
 * Samples in a row that must find a standby's worker not ready before the watchdog restarts it:
 * two whole sample intervals, in which a worker that just started or just stopped consuming
 * runs its first self-test (it runs one every interval).
 */
export const UNREADY_SAMPLES = 3;

/**
 * Why a node's worker has not been ready for UNREADY_SAMPLES samples in a row (the newest
 * sample's fault), or null. A worker restart can cure these; a standby behind the epoch or
 * silent is another matter (peer-sync, or a lost node).
 */
export const unreadyWorker = (hb: Heartbeat, sampleMs: number): WorkerFault | null => {
  const last = hb.samples.slice(-UNREADY_SAMPLES);
  if (last.length < UNREADY_SAMPLES) return null;
  const faults = last.map((s) => workerFault(s, sampleMs));
  return faults.every((f) => f !== null) ? (faults.at(-1) ?? null) : null;
};

/**
 * Standbys that could take over now, best first: a fresh heartbeat, a live worker that passed
 * its self-test within PROOF_INTERVALS sample intervals, synced to
 * the current epoch, not claiming the role, with no incident open (but one whose lost standby
 * is heard from again and only waits for its restart's result, or one whose rejoin the
 * watchdog closes once it judges the node this round); then by configured priority,
 * and at equal priority one in another availability zone than the primary's (a zone outage
 * takes the primary's zone-mates with it), then by name.
 */
export const readyStandbys = (
  nodes: readonly NodeSpec[],
  watches: Readonly<Record<string, NodeWatch>>,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  leader: Leader,
  now: number,
  sampleMs: number,
  unready: ReadonlySet<string> = new Set(),
): NodeSpec[] => {
  const primaryZone = nodes.find((n) => n.name === leader.primary)?.zone;
  const sameZone = (spec: NodeSpec): number => (primaryZone !== undefined && spec.zone === primaryZone ? 1 : 0);
  return nodes
    .filter((spec) => {
      if (spec.name === leader.primary || unready.has(spec.name)) return false;
      const watch = watches[spec.name];
      const hb = heartbeats.get(spec.name);
      const last = hb?.samples.at(-1);
      if (watch === undefined || hb === undefined || last === undefined || isSilent(watch, now, sampleMs)) return false;
      const incident = watch.incident?.kind ?? null;
      return (hb.role === 'standby' || hb.role === 'fenced') && workerFault(last, sampleMs) === null && last.epochSeen === leader.epoch && (incident === null || incident === 'standby' || incident === 'rejoin');
    })
    .sort((a, b) => a.priority - b.priority || sameZone(a) - sameZone(b) || a.name.localeCompare(b.name));
};
