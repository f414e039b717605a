import type { NodeSpec } from '../config';
import { isLost } from '../fleet/membership';
import { isProven, PROOF_INTERVALS, readyStandbys } from '../fleet/readiness';
import { cordonedNodes } from '../fleet/maintenance';
import { valueOf, type HeartbeatObservation, type Observed } from './observed';
import type { Heartbeat, Leader } from '../schemas';
import { emptyWatch, type NodeWatch, type WatchdogState } from '../fleet/watchdog-state';

/**
 * A node's watchdog record as an operator command sees it: counters and incident from
 * watchdog/state.json, but "last seen" from S3's Last-Modified of the heartbeat object. A
 * one-shot command has no observation history of its own, and the node's clock (the samples'
 * `at`) must not decide anything; `now` is S3's clock too (the Date of the same listing).
 */
export const operatorWatch = (
  stored: NodeWatch | undefined,
  obs: HeartbeatObservation | undefined,
  t?: FreshTiming,
): NodeWatch => {
  const hb = valueOf(obs?.heartbeat);
  const newest = hb?.samples.at(-1);
  const writtenAt = obs?.writtenAt ?? null;
  // A heartbeat rewritten only with news is heard from for as long as it stays fresh (freshForMs):
  // the view's loss rule (two sample intervals) applied to `newest` then says what isFresh says.
  const credit = t === undefined ? 0 : freshForMs(hb, t) - 2 * t.sampleMs;
  const known = hb === null || newest === undefined || writtenAt === null;
  return {
    ...(stored ?? emptyWatch()),
    newest: known ? null : { boot: hb.boot, seq: newest.seq, changedAt: writtenAt + credit },
  };
};

/** The sample interval and the heartbeat keep-alive, in ms, and who holds the lease (null: unknown, unreadable). */
export interface FreshTiming {
  sampleMs: number;
  keepAliveMs: number;
  holder: string | null;
}

/**
 * How long a heartbeat object stays fresh. Nodes rewrite theirs only with news (the lease and the
 * beat items speak for them otherwise), so: the keep-alive and two sample intervals, except for a
 * heartbeat that says primary while another node holds the lease (an old primary's last word).
 */
export const freshForMs = (hb: Heartbeat | null, t: FreshTiming): number => {
  const outdated = hb === null || (hb.role === 'primary' && t.holder !== null && hb.node !== t.holder);
  return outdated ? 2 * t.sampleMs : t.keepAliveMs + 2 * t.sampleMs;
};

/** Fresh: the heartbeat object was written within freshForMs by S3's clock. */
export const isFresh = (obs: HeartbeatObservation | undefined, now: number, t: FreshTiming): boolean => {
  const watch = operatorWatch(undefined, obs);
  return watch.newest !== null && now - watch.newest.changedAt < freshForMs(valueOf(obs?.heartbeat), t);
};

/** Everything the readiness of a node depends on. */
export interface ReadinessInput {
  nodes: readonly NodeSpec[];
  leader: Leader;
  heartbeats: ReadonlyMap<string, HeartbeatObservation>;
  watchdog: Observed<WatchdogState>;
  now: number;
  sampleMs: number;
  /** The heartbeat keep-alive in ms; without it a heartbeat is fresh for two sample intervals. */
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
  if (input.watchdog.state === 'corrupt')
    reasons.push('watchdog/state.json is corrupt, so an open incident cannot be ruled out');
  if (name === leader.primary) reasons.push(`it is the primary of epoch ${leader.epoch}`);
  if (input.watchdog.state === 'ok' && input.watchdog.value.maintenance?.cordoned[name] !== undefined)
    reasons.push(`it is cordoned (fleet uncordon ${name})`);
  const hb = input.heartbeats.get(name)?.heartbeat ?? { state: 'missing' };
  if (hb.state === 'missing') reasons.push('it has no heartbeat');
  else if (hb.state === 'corrupt') reasons.push(`its heartbeat is corrupt (${hb.error})`);
  else {
    const last = hb.value.samples.at(-1);
    if (watch.newest === null) reasons.push('the age of its heartbeat is unknown');
    else if (isLost(watch, now, 2 * sampleMs)) {
      const writtenAt = input.heartbeats.get(name)?.writtenAt ?? watch.newest.changedAt;
      reasons.push(
        `its heartbeat was last written ${seconds(now - writtenAt)} s ago (fresh is ` +
          `under ${seconds(freshForMs(hb.value, timingOf(input)))} s)`,
      );
    }
    if (hb.value.role !== 'standby' && hb.value.role !== 'fenced') reasons.push(`it reports role ${hb.value.role}`);
    if (last !== undefined && last.workerProcesses === 0) reasons.push('it has no live worker process');
    else if (last !== undefined && !isProven(last, sampleMs))
      reasons.push(
        last.proofAgeMs === undefined
          ? 'its agent reports no self-test (an older agent)'
          : last.proofAgeMs === null
            ? 'its worker has not passed a self-test'
            : `its worker last passed a self-test ${seconds(last.proofAgeMs)} s ago ` +
              `(within ${seconds(PROOF_INTERVALS * sampleMs)} s is ready)`,
      );
    if (last !== undefined && last.epochSeen !== leader.epoch)
      reasons.push(`it has seen epoch ${last.epochSeen}, the current one is ${leader.epoch}`);
  }
  if (watch.incident !== null) reasons.push(`it has an open incident ${watch.incident.id} (${watch.incident.kind})`);
  return reasons;
};

/**
 * Could `name` take over now? The rule is `readyStandbys` (fresh heartbeat, live worker, synced
 * to the current epoch, no open incident), applied to what an operator can observe; the
 * reasons only put a refusal into words.
 */
const timingOf = (input: ReadinessInput): FreshTiming => ({
  sampleMs: input.sampleMs,
  keepAliveMs: input.keepAliveMs ?? 0,
  holder: input.leader.primary,
});

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
  const { nodes, leader, now, sampleMs } = input;
  const unready = cordonedNodes(input.watchdog.state === 'ok' ? input.watchdog.value.maintenance : undefined);
  const ruled = readyStandbys({
    nodes,
    watches,
    heartbeats,
    leader,
    now,
    sampleMs,
    lostMs: 2 * sampleMs,
    unready,
  }).some((s) => s.name === name);
  const ready = ruled && reasons.length === 0;
  if (!ready && reasons.length === 0) reasons.push('it is not among the ready standbys');
  return { ready, reasons };
};
