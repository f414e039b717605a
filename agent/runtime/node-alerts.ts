import type { AlertTopic } from '../../lib/aws/alerts';
import { describeError } from '../../lib/core/errors';
import type { EventKind } from '../../lib/core/events';
import { emptyCounter } from '../../lib/core/fleet/stall';
import { makeEvent } from '../../lib/core/fleet/watchdog-events';
import type { Logger } from '../../lib/log';

/** Sends an alert raised on a node (poison task, damaged manifest); never throws. */
export const alertFromNode = async (
  alerts: AlertTopic | null,
  log: Logger,
  event: { kind: EventKind; node: string; incidentId: string; epoch: number; at: number; summary: string },
): Promise<void> => {
  if (alerts === null) return;
  const body = makeEvent(
    event.kind,
    event.node,
    { id: event.incidentId.slice(0, 160), epoch: event.epoch },
    emptyCounter(),
    event.at,
    event.summary,
  );
  await alerts
    .publish(body)
    .catch((error: unknown) => log.error({ err: describeError(error) }, `${event.kind} alert not published`));
};
