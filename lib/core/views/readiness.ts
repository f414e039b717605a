import type { NodeSpec } from '../config';
import { isProven, isSilent, PROOF_INTERVALS, readyStandbys } from '../fleet/liveness';
import { valueOf, type HeartbeatObservation, type Observed } from './observed';
import type { Heartbeat, Leader } from '../schemas';
import { emptyWatch, type NodeWatch, type WatchdogState } from '../fleet/watchdog-state';


/**
 * A node's watchdog record as an operator command sees it: counters and incident from
 * watchdog/state.json, but "last seen" from S3's Last-Modified of the heartbeat object. A
 * one-shot command has no observation history of its own, and the node's clock (the samples'
 * `at`) must not decide anything; `now` is S3's clock too (the Date of the same listing).
 */
export const operatorWatch = (stored: NodeWatch | undefined, obs: HeartbeatObservation | undefined, t?: FreshTiming): NodeWatch => {
  const hb = valueOf(obs?.heartbeat);
  const newest = hb?.samples.at(-1);
  const writtenAt = obs?.writtenAt ?? null;
  // A heartbeat rewritten only with news is heard from for as long as it stays fresh (freshForMs),
  // not two sample intervals: the silence rule applied to `seen` then says what isFresh says.
  const credit = t === undefined ? 0 : freshForMs(hb, t) - 2 * t.sampleMs;
  const seen = hb === null || newest === undefined || writtenAt === null ? null : { boot: hb.boot, seq: newest.seq, at: writtenAt + credit };
  return { ...(stored ?? emptyWatch()), seen };
};

/**
 * The sample interval and the heartbeat keep-alive, in ms, who holds the lease (null: unknown,
 * the record unreadable), and what its last renewal said of the other nodes (`leader.peers`).
 */
export interface FreshTiming {
  sampleMs: number;
  keepAliveMs: number;
  holder: string | null;
  peers?: Leader['peers'];
}

/**
 * How long a heartbeat object stays fresh. Nodes rewrite theirs only when they have news: the
 * primary's lease renewals and the standbys' beat items carry their liveness, and a one-shot
 * command cannot time those. So: the keep-alive and two sample intervals, for the heartbeat of
 * the lease's holder that says it is primary, and for a standby's unless the lease's last renewal
 * says it has been quiet for two sample intervals (`leader.peers`); two sample intervals (the
 * watchdog's silence rule) for the rest, as an old primary's last heartbeat. With the lease
 * unreadable, any heartbeat that says primary is given the keep-alive.
 */
export const freshForMs = (hb: Heartbeat | null, t: FreshTiming): number => {
  const kept = t.keepAliveMs + 2 * t.sampleMs;
  if (hb === null) return 2 * t.sampleMs;
  if (hb.role === 'primary') return t.holder === null || hb.node === t.holder ? kept : 2 * t.sampleMs;
  const quiet = t.peers?.[hb.node];
  return quiet !== undefined && quiet.boot === hb.boot && quiet.quietMs >= 2 * t.sampleMs ? 2 * t.sampleMs : kept;
};

/** Fresh: the heartbeat object was written within freshForMs by S3's clock. */
export const isFresh = (obs: HeartbeatObservation | undefined, now: number, t: FreshTiming): boolean => {
  const watch = operatorWatch(undefined, obs);
  return watch.seen !== null && now - watch.seen.at < freshForMs(valueOf(obs?.heartbeat), t);
};

/** Everything the readiness of a node depends on. */
export interface ReadinessInput {
  nodes: readonly NodeSpec[];
  leader: Leader;
  heartbeats: ReadonlyMap<string, HeartbeatObservation>;
  watchdog: Observed<WatchdogState>;
  now: number;
  sampleMs: number;
  /** The heartbeat keep-alive (`heartbeatKeepAliveSeconds`) in ms; without it a heartbeat is fresh for two sample intervals. */
  keepAliveMs?: number;
}

export interface Readiness {
  ready: boolean;
  /** Why not, in words; empty when ready. */
  reasons: string[];
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** The reasons `readyStandbys` would pass over the node, spelled out for a person. */
const reasonsAgainst = (name: string, watch: NodeWatch, input: ReadinessInput): string[] => {
  const { leader, now, sampleMs } = input;
  const reasons: string[] = [];
  if (input.watchdog.state === 'corrupt') reasons.push('watchdog/state.json is corrupt, so an open incident cannot be ruled out');
  if (name === leader.primary) reasons.push(`it is the primary of epoch ${leader.epoch}`);
  const hb = input.heartbeats.get(name)?.heartbeat ?? { state: 'missing' };
  if (hb.state === 'missing') reasons.push('it has no heartbeat');
  else if (hb.state === 'corrupt') reasons.push(`its heartbeat is corrupt (${hb.error})`);
  else {
    const last = hb.value.samples.at(-1);
    if (watch.seen === null) reasons.push('the age of its heartbeat is unknown');
    else if (isSilent(watch, now, sampleMs)) {
      const writtenAt = input.heartbeats.get(name)?.writtenAt ?? watch.seen.at;
      reasons.push(`its heartbeat was last written ${seconds(now - writtenAt)} s ago (fresh is under ${seconds(freshForMs(hb.value, timingOf(input)))} s)`);
    }
    if (hb.value.role !== 'standby' && hb.value.role !== 'fenced') reasons.push(`it reports role ${hb.value.role}`);
    if (last !== undefined && last.workerProcesses === 0) reasons.push('it has no live worker process');
    else if (last !== undefined && !isProven(last, sampleMs)) reasons.push(last.proofAgeMs === undefined ? 'its agent reports no self-test (an older agent)' : last.proofAgeMs === null ? 'its worker has not passed a self-test' : `its worker last passed a self-test ${seconds(last.proofAgeMs)} s ago (within ${seconds(PROOF_INTERVALS * sampleMs)} s is ready)`);
    if (last !== undefined && last.epochSeen !== leader.epoch) reasons.push(`it has seen epoch ${last.epochSeen}, the current one is ${leader.epoch}`);
  }
  if (watch.incident !== null) reasons.push(`it has an open incident ${watch.incident.id} (${watch.incident.kind})`);
  return reasons;
};

/**
 * Could `name` take over now? The rule is `readyStandbys` (fresh heartbeat, live worker, synced
 * to the current epoch, no open incident), applied to what an operator can observe; the
 * reasons only put a refusal into words.
 */
const timingOf = (input: ReadinessInput): FreshTiming => ({ sampleMs: input.sampleMs, keepAliveMs: input.keepAliveMs ?? 0, holder: input.leader.primary, peers: input.leader.peers });

export const readiness = (name: string, input: ReadinessInput): Readiness => {
  const stored = input.watchdog.state === 'ok' ? input.watchdog.value.nodes : {};
  const watches: Record<string, NodeWatch> = {};
  const heartbeats = new Map<string, Heartbeat>();
  for (const spec of input.nodes) {
    const obs = input.heartbeats.get(spec.name);
    watches[spec.name] = operatorWatch(stored[spec.name], obs, timingOf(input));
    const hb = valueOf(obs?.heartbeat);
    if (hb !== null) heartbeats.set(spec.name, hb);
  }
  const reasons = reasonsAgainst(name, watches[name] ?? operatorWatch(undefined, undefined), input);
  const ruled = readyStandbys(input.nodes, watches, heartbeats, input.leader, input.now, input.sampleMs).some((s) => s.name === name);
  const ready = ruled && reasons.length === 0;
  if (!ready && reasons.length === 0) reasons.push('it is not among the ready standbys');
  return { ready, reasons };
};
