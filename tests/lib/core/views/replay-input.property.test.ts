import fc from 'fast-check';
import { fleetEventSchema, type FleetEvent } from '../../../../lib/core/events';
import { parseEventId, parseReplayRequest } from '../../../../lib/core/views/replay-input';
import {
  expectNoPollution,
  hostileStringArb,
  hostileValueArb,
  mutationArb,
  outcomeOf,
  POLLUTERS,
  PROTOTYPE_KEYS,
  RUNS,
} from '../../../helpers/hostile';
import { stalledEvent } from '../../../helpers/fixtures';

/**
 * Hostile input: what an operator pastes into the replay function's console (or a file given
 * to `fleet replay --file`): an event, an alert as published, an SNS event, `{ "eventId": … }`,
 * with or without `"execute"`. Anything else is refused naming the field, before anything is read.
 */
const EVENT: FleetEvent = stalledEvent;

const SHAPES = [
  ['an event object', { ...EVENT, execute: true }],
  [
    'an SNS event',
    { Records: [{ EventSource: 'aws:sns', Sns: { MessageId: 'm-1', Message: JSON.stringify(EVENT) } }] },
  ],
  ['an SNS notification', { Type: 'Notification', MessageId: 'm-1', Message: JSON.stringify(EVENT) }],
  ['an event id', { eventId: 'node-1-e3-i1.STALLED', execute: false }],
] as const;

/** A replay input with hostile text where the event travels as a string (an SNS message). */
const messageArb = fc.oneof(
  hostileStringArb,
  hostileValueArb.map((v) => JSON.stringify(v) ?? ''),
  mutationArb(EVENT).map((m) => JSON.stringify(m.value) ?? ''),
);
const inputArb = fc.oneof(
  hostileValueArb,
  fc.constantFrom(...POLLUTERS),
  fc.constantFrom(...SHAPES.map(([, s]) => s)).chain((shape) => mutationArb(shape).map((m) => m.value)),
  messageArb.map((Message) => ({ Records: [{ Sns: { Message } }] })),
  messageArb.map((Message) => ({ Type: 'Notification', Message })),
  fc.record({ eventId: hostileStringArb, execute: fc.oneof(fc.boolean(), hostileValueArb) }),
);

describe('replay input, over hostile values', () => {
  afterEach(expectNoPollution);

  it.each(SHAPES)('reads %s', (_shape, input) => {
    expect(outcomeOf(() => parseReplayRequest(input)).ok).toBe(true);
  });

  it('reads any input as a request, or refuses it naming the field', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const out = outcomeOf(() => parseReplayRequest(input));
        expectNoPollution();
        if (!out.ok) return;
        // What it accepts is a valid event, or an id split into a known kind and a plain incident id.
        const { ref } = out.value;
        if ('event' in ref) expect(fleetEventSchema.safeParse(ref.event).success).toBe(true);
        else expect(`${ref.incidentId}.${ref.kind}`).toBe(ref.eventId);
        expect(typeof out.value.execute).toBe('boolean');
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses an event naming a node that every object already has a property for', () => {
    // The replay looks the node up in the watchdog's state (`state.nodes[event.node]`).
    const out = outcomeOf(() => parseReplayRequest({ ...EVENT, node: 'constructor' }));
    expect(out.ok ? 'accepted' : out.error.field).toBe('node');
  });

  it('refuses every event id that is not <incident>.<KIND>, naming eventId', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileStringArb,
          fc.constantFrom<string>(...PROTOTYPE_KEYS.map((k) => `${k}.STALLED`), '.STALLED', 'x.', 'x.stalled'),
        ),
        (id) => {
          const out = outcomeOf(() => parseEventId(id));
          if (!out.ok) expect(out.error.field).toBe('eventId');
        },
      ),
      { numRuns: RUNS },
    );
  });
});
