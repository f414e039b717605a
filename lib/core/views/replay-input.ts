import { z } from 'zod';
import { ValidationError } from '../errors';
import { EVENT_KINDS, fleetEventSchema, type EventKind, type FleetEvent } from '../events';
import { parseJsonText, parseWith } from '../validate';

/** What a replay names: an event in hand, or the id of one stored under `events/`. */
export type ReplayRef = { event: FleetEvent } | { eventId: string; incidentId: string; kind: EventKind };

export interface ReplayRequest {
  ref: ReplayRef;
  /** False (the default) plans only: nothing is written and nothing is sent. */
  execute: boolean;
}

const executeSchema = z.boolean().default(false);
const snsLambdaSchema = z.object({ Records: z.array(z.object({ Sns: z.object({ Message: z.string() }) })).min(1) });
const snsNotificationSchema = z.object({ Type: z.literal('Notification'), Message: z.string() });

/** Splits `<incidentId>.<KIND>` (an event's id) into its parts. */
export const parseEventId = (id: string): { eventId: string; incidentId: string; kind: EventKind } => {
  const dot = id.lastIndexOf('.');
  const kind = id.slice(dot + 1);
  const incidentId = id.slice(0, dot);
  if (dot <= 0 || !(EVENT_KINDS as readonly string[]).includes(kind) || !/^[A-Za-z0-9._-]{1,160}$/.test(incidentId)) {
    throw new ValidationError(
      `eventId: "${id.slice(0, 80)}" is not an event id such as node-1-e3-i1.STALLED`,
      'eventId',
    );
  }
  return { eventId: id, incidentId, kind: kind as EventKind };
};

/**
 * Reads a replay request in any shape an operator has at hand in the console: an event object
 * (from `events/` or an alert's body), an SNS event or notification that carries one, or
 * `{ "eventId": "…" }`; each may add `"execute": true`. Errors name the field.
 */
export const parseReplayRequest = (input: unknown): ReplayRequest => {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ValidationError('replay input: must be a JSON object', '(root)');
  const { execute: rawExecute, ...rest } = input as Record<string, unknown>;
  const execute = parseWith(executeSchema, rawExecute, 'replay input: execute');
  if ('eventId' in rest) {
    const { eventId } = parseWith(z.strictObject({ eventId: z.string().min(1).max(200) }), rest, 'replay input');
    return { ref: parseEventId(eventId), execute };
  }
  const lambda = snsLambdaSchema.safeParse(rest);
  if (lambda.success) return { ref: { event: parseMessage(lambda.data.Records[0]?.Sns.Message ?? '') }, execute };
  const notification = snsNotificationSchema.safeParse(rest);
  if (notification.success) return { ref: { event: parseMessage(notification.data.Message) }, execute };
  return {
    ref: {
      event: parseWith(fleetEventSchema, rest, 'replay input (an event object, an SNS message or { "eventId": … })'),
    },
    execute,
  };
};

const parseMessage = (message: string): FleetEvent =>
  parseWith(fleetEventSchema, parseJsonText(message, 'SNS message'), 'SNS message');
