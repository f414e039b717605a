import { ValidationError } from '../../../../lib/core/errors';
import {
  eventCandidates,
  eventKeyParts,
  newestGroup,
  orderEvents,
  parseKind,
  parseLimit,
  parseSince,
  sinceTime,
} from '../../../../lib/core/views/event-query';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import { makeEvent } from '../../../../lib/core/fleet/watchdog-events';

const NOW = 1_800_000_000_000;

describe('parseSince', () => {
  it.each([
    ['30s', NOW - 30_000],
    ['15m', NOW - 900_000],
    ['2h', NOW - 7_200_000],
    ['1d', NOW - 86_400_000],
    ['1.5h', NOW - 5_400_000],
    ['2025-01-31T12:00Z', Date.UTC(2025, 0, 31, 12)],
    ['2025-01-31', Date.UTC(2025, 0, 31)],
  ])('reads %s', (raw, at) => {
    expect(sinceTime(parseSince(raw), NOW)).toBe(at);
  });

  it.each(['yesterday', '0m', '-5m', '15', '15 minutes', '2025-13-45', ''])('rejects %p naming --since', (raw) => {
    expect(() => parseSince(raw)).toThrow(
      expect.objectContaining({ field: '--since', message: expect.stringContaining('--since') }) as Error,
    );
  });
});

describe('parseKind and parseLimit', () => {
  it('takes a kind in any case', () => {
    expect(parseKind('stalled')).toBe('STALLED');
  });

  it('rejects an unknown kind and lists the kinds', () => {
    expect(() => parseKind('EXPLODED')).toThrow(ValidationError);
    expect(() => parseKind('EXPLODED')).toThrow(/--kind: must be one of STALLED, .*RECOVERED/);
  });

  it.each(['0', '1001', '2.5', 'ten'])('rejects --limit %p', (raw) => {
    expect(() => parseLimit(raw)).toThrow(/--limit/);
  });
});

describe('eventCandidates', () => {
  const listed = [
    { key: 'events/node-1-e1-i1/STALLED.json', lastModified: NOW - 60_000 },
    { key: 'events/node-1-e1-i1/RESTART_SENT.json', lastModified: NOW - 50_000 },
    { key: 'events/node-2-e1-i1/REDUNDANCY_LOST.json', lastModified: NOW - 7_200_000 },
    { key: 'events/node-1-e1-i1/notes.txt', lastModified: NOW },
  ];

  it('orders event objects newest first by S3 time and skips other keys', () => {
    expect(eventCandidates(listed, {}).map((e) => eventKeyParts(e.key)?.kind)).toEqual([
      'RESTART_SENT',
      'STALLED',
      'REDUNDANCY_LOST',
    ]);
  });

  it('filters by kind from the key and by time from the listing, without reading', () => {
    expect(eventCandidates(listed, { kind: 'STALLED' }).map((e) => e.key)).toEqual([
      'events/node-1-e1-i1/STALLED.json',
    ]);
    expect(eventCandidates(listed, { since: NOW - 3_600_000 })).toHaveLength(2);
  });

  it('reads only the newest second to find the newest event (of a kind)', () => {
    expect(newestGroup(listed).map((e) => e.key)).toEqual(['events/node-1-e1-i1/RESTART_SENT.json']);
    expect(newestGroup(listed, 'REDUNDANCY_LOST').map((e) => e.key)).toEqual([
      'events/node-2-e1-i1/REDUNDANCY_LOST.json',
    ]);
    expect(newestGroup(listed, 'PROMOTED')).toEqual([]);
  });

  it("breaks a tie in Last-Modified (S3 keeps seconds) by the writer's time", () => {
    const ev = (kind: 'PROMOTED' | 'RECORD_CHANGED', at: number) => ({
      listed: { key: `events/i/${kind}.json`, lastModified: NOW },
      event: makeEvent(kind, 'node-1', { id: 'i', epoch: 1 }, emptyCounter(), at, ''),
    });
    expect(orderEvents([ev('PROMOTED', NOW - 10), ev('RECORD_CHANGED', NOW - 5)]).map((e) => e.event.kind)).toEqual([
      'RECORD_CHANGED',
      'PROMOTED',
    ]);
  });
});
