import fc from 'fast-check';
import { createNotifier } from '../../../../lib/control/notifier/notify';
import type { WebhookFetch, WebhookRequest } from '../../../../lib/control/slack/webhook';
import type { SlackPayload } from '../../../../lib/core/views/slack-message';
import { memoryLogger } from '../../../helpers/memory-logger';
import {
  brokenTextArb,
  expectNoPollution,
  hostileJsonTextArb,
  hostileStringArb,
  hostileValueArb,
  markupRunArb,
  outcomeOfAsync,
  POLLUTERS,
  RUNS,
} from '../../../helpers/hostile';
import { slackProblems } from '../../../helpers/slack-limits';
import { stalledEvent } from '../../../helpers/fixtures';

/**
 * Hostile input: SNS records reaching the notifier. One Lambda event may carry anything; each
 * record is posted or rejected with its index, the others are unaffected, the handler never
 * throws for bad input inside a record, and what it posts is a payload Slack takes.
 */
const EVENT = stalledEvent;
/** With an `&`, which Slack's link syntax needs escaped. */
const RUNBOOK = 'https://wiki.example.com/view?space=ops&page=runbook';

const harness = (): { notify: ReturnType<typeof createNotifier>; posted: WebhookRequest[] } => {
  const posted: WebhookRequest[] = [];
  const fetch: WebhookFetch = (_url, init) => {
    posted.push(init);
    return Promise.resolve({ status: 200, headers: { get: () => null }, text: () => Promise.resolve('ok') });
  };
  const notify = createNotifier({
    fetch,
    webhookUrl: {
      get: () => Promise.resolve('https://hooks.slack.com/services/T0/B0/secret'),
      invalidate: () => undefined,
    },
    log: memoryLogger().log,
    sleep: () => Promise.resolve(),
    random: () => 0.5,
    now: () => 1_700_000_000_000,
    runbookUrl: RUNBOOK,
  });
  return { notify, posted };
};

/** A message: a valid alert with hostile text in it, or any body at all. */
const messageArb = fc.oneof(
  fc
    .record({ summary: fc.oneof(hostileStringArb, markupRunArb).map((s) => s.slice(0, 1000)), next: brokenTextArb })
    .map((over) => JSON.stringify({ ...EVENT, ...over })),
  hostileJsonTextArb,
  fc.constantFrom(...POLLUTERS.map((p) => JSON.stringify(p))),
);

/** A record as SNS sends it, or a hostile stand-in for one. */
const recordArb = fc.oneof(
  {
    arbitrary: messageArb.map((Message) => ({ EventSource: 'aws:sns', Sns: { MessageId: 'm-1', Message } })),
    weight: 3,
  },
  { arbitrary: hostileValueArb, weight: 1 },
  { arbitrary: hostileValueArb.map((Message) => ({ Sns: { Message } })), weight: 1 },
  { arbitrary: fc.constantFrom(...POLLUTERS), weight: 1 },
);

describe('notifier, over hostile SNS records', () => {
  afterEach(expectNoPollution);

  it('posts or rejects each record by its index, and posts only payloads Slack takes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { maxLength: 4 }), async (records) => {
        const { notify, posted } = harness();
        const result = await notify({ Records: records });
        expectNoPollution();
        expect(result.delivered + result.rejected.length).toBe(records.length);
        expect(posted).toHaveLength(result.delivered);
        for (const r of result.rejected) expect(r.reason).toMatch(/^ValidationError: /);
        for (const request of posted)
          expect(slackProblems(JSON.parse(request.body) as SlackPayload, RUNBOOK)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses an event that is not an SNS event at all with a ValidationError, posting nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileValueArb, fc.constantFrom(...POLLUTERS)), async (event) => {
        const { notify, posted } = harness();
        const out = await outcomeOfAsync(() => notify(event));
        if (!out.ok) expect(posted).toHaveLength(0);
        expectNoPollution();
      }),
      { numRuns: RUNS },
    );
  });
});
