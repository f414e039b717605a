import { z } from 'zod';
import { describeError, FleetError } from '../../core/errors';
import { formatAlert, parseAlertMessage, type AlertMessage } from '../../core/views/slack-message';
import { parseWith } from '../../core/validate';
import { withLogFields, type Logger } from '../../log';
import { DEFAULT_WEBHOOK_OPTIONS, postToWebhook, type WebhookFetch, type WebhookOptions } from '../slack/webhook';

/**
 * Posts every message of the alert topic (FleetEvents and CloudWatch alarms) to Slack; the
 * Lambda handler in functions/notifier only builds its dependencies.
 */
const snsEventSchema = z.object({ Records: z.array(z.unknown()) });
const snsRecordSchema = z.object({ Sns: z.object({ MessageId: z.string().optional(), Message: z.string() }) });

/** Where the webhook URL comes from: SecureParameter in production. */
export interface WebhookUrlSource {
  get(): Promise<string>;
  invalidate(): void;
}

/** Everything the notifier touches, injected so tests control I/O, time and randomness. */
export interface NotifierDeps {
  fetch: WebhookFetch;
  webhookUrl: WebhookUrlSource;
  log: Logger;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  now: () => number;
  /** `runbookUrl`: every message links its entry there. */
  runbookUrl: string;
  webhook?: WebhookOptions;
}

/** One run: records posted, and records that were not alerts at all (never retried). */
export interface NotifierResult {
  delivered: number;
  rejected: { index: number; reason: string }[];
}

export type Notifier = (event: unknown) => Promise<NotifierResult>;

/** Enough of a bad body to recognise it in the log, too little to leak a secret pasted into it. */
const excerptOf = (message: string): string => message.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');

const labelOf = (m: AlertMessage): Record<string, string> =>
  m.type === 'event'
    ? { type: m.type, kind: m.event.kind, node: m.event.node, eventId: m.event.id }
    : { type: m.type, alarm: m.alarm.AlarmName };

/** Posts one alert to Slack; the reason it was not delivered, or null. */
const deliver = async (
  deps: NotifierDeps,
  message: AlertMessage,
  at: { index: number; messageId: string | undefined },
): Promise<string | null> => {
  const started = deps.now();
  try {
    const url = await deps.webhookUrl.get();
    const attempts = await postToWebhook(
      url,
      formatAlert(message, deps.runbookUrl),
      deps,
      deps.webhook ?? DEFAULT_WEBHOOK_OPTIONS,
    );
    deps.log.info({ ...at, ...labelOf(message), attempts, ms: deps.now() - started }, 'alert delivered to Slack');
    return null;
  } catch (error) {
    // The URL may have been rotated or revoked (403/404/410): the next attempt rereads SSM.
    deps.webhookUrl.invalidate();
    const reason = describeError(error);
    deps.log.error({ ...at, ...labelOf(message), reason, ms: deps.now() - started }, 'alert not delivered to Slack');
    return reason;
  }
};

/** Builds the notifier from its dependencies. Records are independent: one bad record stops nothing. */
export const createNotifier =
  (deps: NotifierDeps): Notifier =>
  async (event) => {
    const { Records } = parseWith(snsEventSchema, event, 'SNS event');
    const result: NotifierResult = { delivered: 0, rejected: [] };
    const failed: string[] = [];
    for (const [index, record] of Records.entries()) {
      let message: AlertMessage;
      let sns: z.output<typeof snsRecordSchema>['Sns'] | undefined;
      try {
        sns = parseWith(snsRecordSchema, record, `Records.${index}`).Sns;
        message = parseAlertMessage(sns.Message);
      } catch (error) {
        const reason = describeError(error);
        result.rejected.push({ index, reason });
        deps.log.warn(
          { index, messageId: sns?.MessageId, reason, excerpt: sns === undefined ? undefined : excerptOf(sns.Message) },
          'alert record rejected',
        );
        continue;
      }
      // The delivery's lines (the retries' included) name the incident the alert is a step of.
      const incidentId = message.type === 'event' ? message.event.incidentId : undefined;
      const failure = await withLogFields({ incidentId }, () =>
        deliver(deps, message, { index, messageId: sns.MessageId }),
      );
      if (failure === null) result.delivered += 1;
      else failed.push(`record ${index}: ${failure}`);
    }
    // Throwing hands the event to Lambda's async retries and then the on-failure destination, so
    // an alert is never lost silently. SNS invokes with one record, so no other alert is repeated.
    if (failed.length > 0)
      throw new FleetError(`notifier: ${failed.length} alert(s) not delivered: ${failed.join('; ')}`);
    return result;
  };
