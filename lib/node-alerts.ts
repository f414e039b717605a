import type { AlertTopic } from './aws/alerts';
import { describeError } from './core/errors';
import type { EventKind } from './core/events';
import { emptyCounter } from './core/stall';
import { makeEvent } from './core/watchdog-events';
import type { Logger } from './log';

/** Sends an alert raised on a node (poison task, damaged manifest); never throws. */
export const alertFromNode = async (
  alerts: AlertTopic | null,
  log: Logger,
  event: { kind: EventKind; node: string; incidentId: string; epoch: number; at: number; summary: string },
): Promise<void> => {
  if (alerts === null) return;
  const body = makeEvent(event.kind, event.node, { id: event.incidentId.slice(0, 160), epoch: event.epoch }, emptyCounter(), event.at, event.summary);
  await alerts.publish(body).catch((error: unknown) => log.error({ err: describeError(error) }, `${event.kind} alert not published`));
};
