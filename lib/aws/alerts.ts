import type { SNSClient } from '@aws-sdk/client-sns';
import type { FleetEvent } from '../core/events';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** Subject lines are limited to 100 characters by SNS. */
const subjectOf = (event: FleetEvent): string =>
  `[queen-fleet] ${event.paused === true ? 'PAUSED ' : ''}${event.kind} ${event.node}`.slice(0, 100);

/** The alert topic: one message per incident step, its body the event itself. */
export class AlertTopic {
  constructor(
    private readonly sns: SNSClient,
    readonly topicArn: string,
  ) {}

  async publish(event: FleetEvent): Promise<string> {
    try {
      const out = await this.sns.send(
        new (sdk.sns().PublishCommand)({
          TopicArn: this.topicArn,
          Subject: subjectOf(event),
          Message: JSON.stringify(event),
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
