import type { StateStore } from '../aws/state-store';
import { eventCandidates, eventMatches, orderEvents, type EventQuery, type Listed } from '../core/views/event-query';
import { fleetEventSchema, type FleetEvent } from '../core/events';
import { PREFIXES } from '../core/keys';
import { observeObject } from './observe';

/** What `fleet events` found: matching events newest first, and the objects that would not parse. */
export interface EventsResult {
  events: FleetEvent[];
  corrupt: { key: string; error: string }[];
  /** Event objects read to answer (the rest were decided from the listing). */
  read: number;
}

/** Reads at most this many objects at once. */
const BATCH = 16;

/**
 * Lists `events/` once, filters by kind and time from the keys and Last-Modified times, and
 * reads the candidates newest first only until `limit` events match (the node is inside).
 */
export const queryEvents = async (store: StateStore, q: EventQuery): Promise<EventsResult> => {
  const candidates = eventCandidates(await store.listEntries(PREFIXES.events), q);
  const found: { listed: Listed; event: FleetEvent }[] = [];
  const corrupt: EventsResult['corrupt'] = [];
  let next = 0;
  while (next < candidates.length && found.length < q.limit) {
    const batch = candidates.slice(next, next + Math.min(BATCH, q.limit - found.length));
    next += batch.length;
    const read = await Promise.all(
      batch.map(async (listed) => ({ listed, event: await observeObject(store, listed.key, fleetEventSchema) })),
    );
    for (const { listed, event } of read) {
      if (event.state === 'corrupt') corrupt.push({ key: listed.key, error: event.error });
      else if (event.state === 'ok' && eventMatches(event.value, listed, q)) found.push({ listed, event: event.value });
    }
  }
  return {
    events: orderEvents(found)
      .slice(0, q.limit)
      .map((f) => f.event),
    corrupt,
    read: next,
  };
};
