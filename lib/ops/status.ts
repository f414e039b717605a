import type { ListedObject, StateStore } from '../aws/state-store';
import { newestGroup } from '../core/views/event-query';
import { fleetEventSchema, type EventKind } from '../core/events';
import { KEYS, PREFIXES } from '../core/keys';
import { leaderSchema } from '../core/schemas';
import { buildStatus, type StatusView, type StoredEvent } from '../core/views/status';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import { observeObject, observeHeartbeats, observeQueue, type OpsDeps } from './observe';

/**
 * The newest event (of a kind) from one listing of `events/`: its Last-Modified times order
 * the keys without reading them, so only the objects written in the newest second are read.
 */
const newestEvent = async (
  store: StateStore,
  listing: readonly ListedObject[],
  kind?: EventKind,
): Promise<StoredEvent | null> => {
  const group = newestGroup(listing, kind);
  const read = await Promise.all(
    group.map(async (e) => ({ key: e.key, event: await observeObject(store, e.key, fleetEventSchema) })),
  );
  const valid = read.flatMap((r) =>
    r.event.state === 'ok' ? [{ key: r.key, event: r.event, at: r.event.value.at }] : [],
  );
  const newest = valid.sort((a, b) => b.at - a.at)[0];
  return newest === undefined ? (read[0] ?? null) : { key: newest.key, event: newest.event };
};

const history = async (
  store: StateStore,
): Promise<{ lastEvent: StoredEvent | null; lastPromotion: StoredEvent | null }> => {
  const listing = await store.listEntries(PREFIXES.events);
  const [lastEvent, lastPromotion] = await Promise.all([
    newestEvent(store, listing),
    newestEvent(store, listing, 'PROMOTED'),
  ]);
  return { lastEvent, lastPromotion };
};

/** Gathers leader, heartbeats, watchdog state, queue depth and the last events, and shapes the view. */
export const gatherStatus = async (deps: OpsDeps): Promise<StatusView> => {
  const { store, config } = deps;
  const [leader, watchdog, observed, queue, events] = await Promise.all([
    observeObject(store, KEYS.leader, leaderSchema),
    observeObject(store, KEYS.watchdogState, watchdogStateSchema),
    observeHeartbeats(store, config.nodes),
    observeQueue(deps.queue),
    history(store),
  ]);
  return buildStatus({
    nodes: config.nodes,
    sampleIntervalSeconds: config.sampleIntervalSeconds,
    heartbeatKeepAliveSeconds: config.heartbeatKeepAliveSeconds,
    leader,
    heartbeats: observed.heartbeats,
    strays: observed.strays,
    watchdog,
    queue,
    ...events,
    // Heartbeat ages are S3's Last-Modified against S3's own clock: this machine's may be off.
    now: observed.serverNow ?? deps.now(),
  });
};
