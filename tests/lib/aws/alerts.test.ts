import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { AlertTopic } from '../../../lib/aws/alerts';
import { EVENT_KINDS } from '../../../lib/core/events';
import { parseReplayRequest } from '../../../lib/core/views/replay-input';
import { parseAlertMessage } from '../../../lib/core/views/slack-message';
import { stalledEvent } from '../../helpers/fixtures';

const TOPIC = 'arn:aws:sns:us-west-2:123456789012:fleet-events-test';
const RUNBOOK = 'https://example.com/acme/queens-fleet/docs/runbook.md';

describe('AlertTopic', () => {
  const sns = mockClient(SNSClient);
  beforeEach(() => {
    sns.reset();
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
  });

  const publishedBody = async (kind: (typeof EVENT_KINDS)[number]): Promise<string> => {
    await new AlertTopic(new SNSClient({ region: 'us-west-2' }), TOPIC, RUNBOOK).publish({ ...stalledEvent, kind });
    return sns.commandCalls(PublishCommand).at(-1)?.args[0].input.Message ?? '';
  };

  it.each(EVENT_KINDS)("leads the body of %s (the e-mail's text) with its runbook row", async (kind) => {
    const body = await publishedBody(kind);
    expect(body.startsWith(`{"runbook":"${RUNBOOK}#${kind.toLowerCase()}",`)).toBe(true);
  });

  it('keeps the body the event for its readers: the Slack notifier and a replay', async () => {
    const body = await publishedBody('STALLED');
    expect(parseAlertMessage(body)).toEqual({ type: 'event', event: stalledEvent });
    expect(parseReplayRequest({ Records: [{ Sns: { Message: body } }] }).ref).toEqual({ event: stalledEvent });
  });
});
