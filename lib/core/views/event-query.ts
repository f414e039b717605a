import { ValidationError } from '../errors';
import { EVENT_KINDS, type EventKind, type FleetEvent } from '../events';
import { eventOfKey } from '../keys';
import { nodeNameSchema } from '../schemas';

/** `--since`: a duration back from now, or a point in time. */
export type Since = { kind: 'duration'; ms: number } | { kind: 'date'; at: number };

const DURATION_RE = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** `15m`, `2h`, `1d`, `30s` in ms, or null for anything else. */
export const durationMs = (raw: string): number | null => {
  const d = DURATION_RE.exec(raw.trim());
  if (d === null) return null;
  const ms = Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS];
  // `9…9d` (hundreds of digits) is Infinity: no time to compare with.
  return ms > 0 && Number.isFinite(ms) ? ms : null;
};

/** Parses `15m`, `2h`, `1d`, `30s` or an ISO date; the error names `--since`. */
export const parseSince = (raw: string): Since => {
  const text = raw.trim();
  const ms = durationMs(text);
  if (ms !== null) return { kind: 'duration', ms };
  const at = ISO_RE.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isNaN(at)) return { kind: 'date', at };
  throw new ValidationError(
    `--since: must be a positive duration such as 15m, 2h, 1d or an ISO date such as 2025-01-31T12:00Z, got "${raw}"`,
    '--since',
  );
};

/** The earliest time `since` admits, by `now`. */
export const sinceTime = (since: Since, now: number): number => (since.kind === 'duration' ? now - since.ms : since.at);

/** Parses an event kind (case-insensitive); the error lists the kinds. */
export const parseKind = (raw: string): EventKind => {
  const kind = raw.trim().toUpperCase();
  const found = EVENT_KINDS.find((k) => k === kind);
  if (found === undefined)
    throw new ValidationError(`--kind: must be one of ${EVENT_KINDS.join(', ')}, got "${raw}"`, '--kind');
  return found;
};

/** Parses `--limit`: a whole number from 1 to 1000. */
export const parseLimit = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new ValidationError(`--limit: must be a whole number from 1 to 1000, got "${raw}"`, '--limit');
  return n;
};

/** Parses a node name as the configuration spells them. */
export const parseNode = (raw: string, option = '--node'): string => {
  if (!nodeNameSchema.safeParse(raw).success)
    throw new ValidationError(`${option}: "${raw}" is not a node name (lower-case letters, digits and dashes)`, option);
  return raw;
};

export interface EventQuery {
  node?: string;
  kind?: EventKind;
  /** Earliest time, ms. */
  since?: number;
  limit: number;
}

/** A listed object: key below the prefix and S3's Last-Modified (null when unknown). */
export interface Listed {
  key: string;
  lastModified: number | null;
}

/** The incident id and kind an event key names (`events/<incidentId>/<KIND>.json`), or null. */
export const eventKeyParts = (key: string): { incidentId: string; kind: EventKind } | null => {
  const parts = eventOfKey(key);
  const kind = EVENT_KINDS.find((k) => k === parts?.kind);
  return parts === null || kind === undefined ? null : { incidentId: parts.incidentId, kind };
};

const newestFirst = (a: Listed, b: Listed): number =>
  (b.lastModified ?? -Infinity) - (a.lastModified ?? -Infinity) || b.key.localeCompare(a.key);

/**
 * The listed event objects worth reading, newest first by S3's clock: the key tells the kind
 * and the listing the time, so only the node filter needs the objects themselves.
 */
export const eventCandidates = <L extends Listed>(entries: readonly L[], q: Omit<EventQuery, 'limit' | 'node'>): L[] =>
  entries
    .filter((e) => {
      const parts = eventKeyParts(e.key);
      if (parts === null || (q.kind !== undefined && parts.kind !== q.kind)) return false;
      return q.since === undefined || e.lastModified === null || e.lastModified >= q.since;
    })
    .sort(newestFirst);

/** True when a read event passes the filters its key and listing could not decide. */
export const eventMatches = (event: FleetEvent, listed: Listed, q: EventQuery): boolean =>
  (q.node === undefined || event.node === q.node) &&
  (q.since === undefined || listed.lastModified !== null || event.at >= q.since);

/** Newest first: by S3's Last-Modified, ties (one second on S3) by the writer's `at`. */
export const orderEvents = <T extends { listed: Listed; event: FleetEvent }>(items: readonly T[]): T[] =>
  [...items].sort(
    (a, b) => (b.listed.lastModified ?? -Infinity) - (a.listed.lastModified ?? -Infinity) || b.event.at - a.event.at,
  );

/**
 * Among the newest listed event objects (same Last-Modified), the ones to read to find the newest event (of `kind`).
 */
export const newestGroup = <L extends Listed>(entries: readonly L[], kind?: EventKind): L[] => {
  const events = eventCandidates(entries, kind === undefined ? {} : { kind });
  const top = events[0];
  return top === undefined ? [] : events.filter((e) => e.lastModified === top.lastModified).slice(0, 20);
};
