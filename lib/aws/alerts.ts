import type { SNSClient } from '@aws-sdk/client-sns';
import type { FleetEvent } from '../core/events';
import { alertRunbookLink } from '../core/runbook';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** Subject lines are limited to 100 characters by SNS. */
const subjectOf = (event: FleetEvent): string =>
  `[queen-fleet] ${event.paused === true ? 'PAUSED ' : ''}${event.kind} ${event.node}`.slice(0, 100);

/**
 * The body of an alert: the event itself, led by the link to its runbook entry so an e-mail shows
 * it first. Readers of the event (the notifier, replay) drop the key they do not know.
 */
export const alertBody = (event: FleetEvent, runbookUrl: string): string =>
  JSON.stringify({ runbook: alertRunbookLink(runbookUrl, event.kind), ...event });

/** The alert topic: one message per incident step, its body the event itself. */
export class AlertTopic {
  constructor(
    private readonly sns: SNSClient,
    readonly topicArn: string,
    /** `runbookUrl`: each alert links its entry there. */
    private readonly runbookUrl: string,
  ) {}

  async publish(event: FleetEvent): Promise<string> {
    try {
      const out = await this.sns.send(
        new (sdk.sns().PublishCommand)({
          TopicArn: this.topicArn,
          Subject: subjectOf(event),
          Message: alertBody(event, this.runbookUrl),
          MessageAttributes: {
            kind: { DataType: 'String', StringValue: event.kind },
            node: { DataType: 'String', StringValue: event.node },
          },
        }),
      );
      return out.MessageId ?? '';
    } catch (error) {
      throw toFleetError(error, 'SNS Publish');
    }
  }
}
