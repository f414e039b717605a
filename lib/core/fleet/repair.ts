import type { NodeSpec } from '../config';
import type { FleetEvent } from '../events';
import type { Heartbeat, Leader } from '../schemas';
import { isLost, lostAfterMs } from './membership';
import { workerFault } from './readiness';
import { emptyCounter } from './stall';
import type { Decision, WatchdogSettings } from './watchdog';
import { makeEvent } from './watchdog-events';
import type { WatchdogState } from './watchdog-state';

/**
 * Damaged control objects heal, and say so once.
 *
 * A damaged `leader.json` (unreadable, or not a leader record) is rebuilt, never left to stop
 * the fleet: every renewal and every takeover depends on it. The rebuilt record names the
 * fleet's highest known epoch and the one node that says it holds it; when no single node does,
 * the best node with a proven worker takes the next epoch and waits out a full lease first
 * (`await-fence`), so a holder nobody heard of lapses before it starts. Pure.
 */

/** What the watchdog found at `leader.json` instead of a record. */
export interface LeaderDamage {
  /** The damaged version's ETag: the rebuild replaces exactly it (CAS), or nothing. */
  etag: string;
  detail: string;
}

/**
 * The highest epoch anything the watchdog reads has seen: heartbeats, its incidents, its failovers, the routed record.
 */
export const highestKnownEpoch = (state: WatchdogState, heartbeats: ReadonlyMap<string, Heartbeat>): number => {
  const epochs = [state.origin?.epoch ?? 0];
  for (const hb of heartbeats.values()) for (const s of hb.samples) epochs.push(s.epochSeen, s.consumingEpoch ?? 0);
  for (const watch of Object.values(state.nodes)) {
    const incident = watch.incident;
    if (incident === null) continue;
    epochs.push(incident.epoch);
    // A claimed failover may have promoted already: its epoch is the next one.
    if (incident.stage.name === 'failing-over' || incident.stage.name === 'failover-failed')
      epochs.push(incident.stage.failover.fromEpoch + 1);
  }
  return Math.max(...epochs);
};

/**
 * The record that replaces a damaged one, or null when no node can be named (no holder, no node with a proven worker).
 */
export const rebuildLeader = (
  state: WatchdogState,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  nodes: readonly NodeSpec[],
  now: number,
  settings: WatchdogSettings,
): Leader | null => {
  const sampleMs = settings.sampleIntervalSeconds * 1000;
  const lostMs = lostAfterMs(settings);
  const epoch = highestKnownEpoch(state, heartbeats);
  const heard = nodes.filter((spec) => {
    const watch = state.nodes[spec.name];
    return heartbeats.has(spec.name) && watch !== undefined && !isLost(watch, now, lostMs);
  });
  const holders = heard.filter((spec) => {
    const hb = heartbeats.get(spec.name);
    const last = hb?.samples.at(-1);
    return (
      hb !== undefined &&
      last !== undefined &&
      (hb.role === 'primary' || hb.role === 'pending') &&
      last.epochSeen === epoch
    );
  });
  const base = { version: 1 as const, renewals: 0, changedBy: 'watchdog', previous: null };
  const holder = holders.length === 1 ? holders[0] : undefined;
  if (epoch > 0 && holder !== undefined) {
    return {
      ...base,
      primary: holder.name,
      epoch,
      handover: 'immediate',
      reason: `rebuilt by the watchdog: leader.json was damaged; ${holder.name} holds epoch ${epoch}`,
    };
  }
  const best = [...heard]
    .filter((spec) => {
      const last = heartbeats.get(spec.name)?.samples.at(-1);
      return last !== undefined && workerFault(last, sampleMs) === null;
    })
    .sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name))[0];
  if (best === undefined) return null;
  const why =
    holders.length === 0
      ? `no node says it holds epoch ${epoch}`
      : `${holders.map((h) => h.name).join(' and ')} all say they hold epoch ${epoch}`;
  return {
    ...base,
    primary: best.name,
    epoch: epoch + 1,
    handover: 'await-fence',
    reason:
      `rebuilt by the watchdog: leader.json was damaged and ${why}; ${best.name} takes epoch ${epoch + 1} ` +
      `after a full lease`,
  };
};

/** Id of the alert of one damaged version: the same for every watchdog that finds it, so it goes out once. */
export const damageId = (what: string, etag: string): string =>
  `${what}-damaged-${etag.replace(/[^A-Za-z0-9]/g, '').slice(0, 32) || 'unknown'}`;

const DAMAGED = /^rebuilt by the watchdog: leader\.json was damaged(; | and )/;

/** The LEADER_DAMAGED alert: what was found and what the rebuild does. */
const damageEvent = (damage: LeaderDamage, rebuilt: Leader | null, now: number): FleetEvent => {
  const id = damageId('leader', damage.etag);
  const then =
    rebuilt === null
      ? 'No node can be named yet (none says it holds the highest epoch, none has a proven worker): the next run ' +
        'tries again.'
      : `Copied to quarantine/ and rebuilt: ${rebuilt.reason.replace(DAMAGED, '')}.`;
  return makeEvent(
    'LEADER_DAMAGED',
    rebuilt?.primary ?? 'fleet',
    { id, epoch: rebuilt?.epoch ?? 0 },
    emptyCounter(),
    now,
    `leader.json is damaged (${damage.detail.slice(0, 300)}). ${then}`,
    rebuilt === null ? {} : { newPrimary: rebuilt.primary, newEpoch: rebuilt.epoch },
  );
};

/**
 * The round's repair of a damaged leader record: its alert (first, with the round's own), and
 * the rebuild, carried out by CAS against the damaged version. Pure.
 */
export const withLeaderRepair = (
  verdict: Decision,
  damage: LeaderDamage | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: WatchdogSettings,
): Decision => {
  if (damage === null) return verdict;
  const rebuilt = rebuildLeader(verdict.state, heartbeats, settings.nodes, now, settings);
  return {
    ...verdict,
    actions: [
      { kind: 'publish', event: damageEvent(damage, rebuilt, now) },
      { kind: 'repair-leader', etag: damage.etag, leader: rebuilt },
      ...verdict.actions,
    ],
  };
};

/** The STATE_DAMAGED alert: the watchdog's own state was copied aside and rebuilt. */
export const stateDamageEvent = (etag: string, detail: string, primary: string | null, now: number): FleetEvent =>
  makeEvent(
    'STATE_DAMAGED',
    primary ?? 'fleet',
    { id: damageId('state', etag), epoch: 0 },
    emptyCounter(),
    now,
    `watchdog/state.json is damaged (${detail.slice(0, 300)}); copied to quarantine/ and rebuilt. Open incidents ` +
      `start again from the next samples; incident numbers carry on from the events written.`,
  );
