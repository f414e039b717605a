import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { createNotifier, handler, resetForTests, type Notifier } from '../../functions/notifier/handler';
import { SecureParameter } from '../../lib/aws/parameters';
import { FleetError, ValidationError } from '../../lib/core/errors';
import { RUNBOOK_URL_PLACEHOLDER } from '../../lib/core/runbook';
import type { FleetEvent } from '../../lib/core/events';
import { formatEvent, type SlackPayload } from '../../lib/core/views/slack-message';
import {
  DEFAULT_WEBHOOK_OPTIONS,
  postToWebhook,
  WebhookError,
  type WebhookFetch,
  type WebhookRequest,
  type WebhookResponse,
} from '../../lib/control/slack/webhook';
import { memoryLogger } from '../helpers/memory-logger';

const SECRET = 'XyZsecretTokenQ7w9e1r3t5y7u9i0';
const WEBHOOK_URL = `https://hooks.slack.com/services/T00000001/B00000001/${SECRET}`;
const PARAM = '/queens-fleet/test/slack-webhook-url';
const RUNBOOK = 'https://example.com/acme/queens-fleet/docs/runbook.md';

/** The console test event shipped with the function: an SNS record wrapping a STALLED event. */
const sample = JSON.parse(readFileSync(join(__dirname, '../../functions/notifier/events/sns-alert.json'), 'utf8')) as {
  Records: { Sns: { Message: string } }[];
};
const stalled = JSON.parse(sample.Records[0]?.Sns.Message ?? '') as FleetEvent;
const recovered: FleetEvent = {
  ...stalled,
  id: 'node-1-e3-i1.RECOVERED',
  kind: 'RECOVERED',
  summary: 'node-1 recovered.',
  next: 'Nothing to do.',
};
const alarm = {
  AlarmName: 'queens-fleet-test-dlq',
  NewStateValue: 'ALARM',
  NewStateReason: 'Threshold Crossed',
  StateChangeTime: '2023-11-14T22:15:20.000+0000',
  OldStateValue: 'OK',
};

const snsEvent = (...records: unknown[]): unknown => ({
  Records: records.map((r, i) =>
    typeof r === 'string' ? { EventSource: 'aws:sns', Sns: { MessageId: `msg-${i}`, Message: r } } : r,
  ),
});

/** A fetch Response reduced to what the poster reads. */
const reply = (
  status: number,
  body = status === 200 ? 'ok' : '',
  headers: Record<string, string> = {},
): WebhookResponse => ({
  status,
  headers: { get: (name) => headers[name.toLowerCase()] ?? null },
  text: () => Promise.resolve(body),
});

/** undici's shape: a TypeError whose message and cause both quote the URL. */
const leakyFetchError = (): Error => {
  const cause = Object.assign(new Error(`connect ECONNREFUSED for ${WEBHOOK_URL}`), {
    code: 'ECONNREFUSED',
    url: WEBHOOK_URL,
  });
  return new TypeError(`fetch failed: ${WEBHOOK_URL}`, { cause });
};

const ssm = mockClient(SSMClient);

interface Harness {
  notify: Notifier;
  requests: { url: string; init: WebhookRequest }[];
  slept: number[];
  logText: () => string;
  advance: (ms: number) => void;
}

/** A notifier over a scripted fetch, a fake clock that only sleep and advance move, and a memory log. */
const harness = (script: (WebhookResponse | Error)[] = []): Harness => {
  let t = 1_700_000_000_000;
  const requests: Harness['requests'] = [];
  const slept: number[] = [];
  const fetch: WebhookFetch = (url, init) => {
    requests.push({ url, init });
    const next = script.shift() ?? reply(200);
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  };
  const { log, text } = memoryLogger();
  const now = (): number => t;
  const notify = createNotifier({
    fetch,
    webhookUrl: new SecureParameter(new SSMClient({ region: 'us-west-2' }), PARAM, { now }),
    log,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
    now,
    runbookUrl: RUNBOOK,
  });
  return { notify, requests, slept, logText: text, advance: (ms) => (t += ms) };
};

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

/** An error as Lambda would log it: message, stack, own fields, and every cause below it. */
const everythingIn = (error: unknown): string => {
  const parts: string[] = [];
  for (
    let e = error as { message?: string; stack?: string; cause?: unknown } | undefined;
    e !== undefined && e !== null;
    e = e.cause as typeof e
  ) {
    parts.push(String(e.message), String(e.stack), JSON.stringify(e));
  }
  return parts.join('\n');
};

describe('notifier handler', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({ Parameter: { Name: PARAM, Type: 'SecureString', Value: WEBHOOK_URL } });
    resetForTests();
  });
  afterEach(() => {
    process.env = { ...saved };
    jest.restoreAllMocks();
  });
  afterAll(() => ssm.restore());

  describe('delivery', () => {
    it('posts the formatted event as JSON to the webhook URL', async () => {
      const h = harness();
      await expect(h.notify(sample)).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(h.requests).toHaveLength(1);
      expect(h.requests[0]?.url).toBe(WEBHOOK_URL);
      expect(h.requests[0]?.init).toMatchObject({
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(h.requests[0]?.init.signal).toBeInstanceOf(AbortSignal);
      expect(JSON.parse(h.requests[0]?.init.body ?? '') as SlackPayload).toEqual(formatEvent(stalled, RUNBOOK));
    });

    it('posts a CloudWatch alarm from the same topic', async () => {
      const h = harness();
      await expect(h.notify(snsEvent(JSON.stringify(alarm)))).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(h.requests[0]?.init.body).toContain('queens-fleet-test-dlq');
    });

    it('reports a malformed record with its index and still delivers the others', async () => {
      const h = harness();
      const event = snsEvent(
        JSON.stringify(stalled),
        'hello from the console',
        { Sns: { MessageId: 'msg-2' } },
        JSON.stringify({ ...stalled, kind: 'EXPLODED' }),
        JSON.stringify(recovered),
      );
      const result = await h.notify(event);
      expect(result.delivered).toBe(2);
      expect(result.rejected).toEqual([
        { index: 1, reason: 'ValidationError: alert message: not valid JSON' },
        { index: 2, reason: expect.stringContaining('Records.2: Sns.Message') },
        { index: 3, reason: expect.stringContaining('fleet event: kind') },
      ]);
      expect(h.requests.map((r) => (JSON.parse(r.init.body) as SlackPayload).blocks[0])).toEqual([
        expect.objectContaining({ text: expect.objectContaining({ text: ':warning: STALLED on node-1' }) }),
        expect.objectContaining({ text: expect.objectContaining({ text: ':white_check_mark: RECOVERED on node-1' }) }),
      ]);
      const warnings = h
        .logText()
        .split('\n')
        .filter((l) => l.includes('alert record rejected'));
      expect(warnings.map((l) => (JSON.parse(l) as { index: number }).index)).toEqual([1, 2, 3]);
    });

    it('throws ValidationError naming Records when the event is not from SNS', async () => {
      const error = await failureOf(harness().notify({ source: 'aws.events' }));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('Records');
    });

    it('tries every record, then throws so Lambda retries the undelivered one', async () => {
      const h = harness([reply(400, 'invalid_payload'), reply(200)]);
      const error = await failureOf(h.notify(snsEvent(JSON.stringify(stalled), JSON.stringify(recovered))));
      expect(error).toBeInstanceOf(FleetError);
      expect((error as Error).message).toBe(
        'notifier: 1 alert(s) not delivered: record 0: WebhookError: ' +
          'Slack webhook: HTTP 400 invalid_payload (after 1 attempt)',
      );
      expect(h.requests).toHaveLength(2);
    });
  });

  describe('retries', () => {
    it('retries a 429 after its Retry-After, then succeeds', async () => {
      const h = harness([reply(429, 'rate_limited', { 'retry-after': '2' }), reply(200)]);
      await expect(h.notify(sample)).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(h.requests).toHaveLength(2);
      expect(h.slept).toEqual([2000]);
    });

    it('caps a long Retry-After so the Lambda does not time out', async () => {
      const h = harness([reply(429, '', { 'retry-after': '120' }), reply(200)]);
      await h.notify(sample);
      expect(h.slept).toEqual([3000]);
    });

    it.each([500, 502, 503, 504])('retries a %i with back-off, then succeeds', async (status) => {
      const h = harness([reply(status), reply(status), reply(200)]);
      await expect(h.notify(sample)).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(h.requests).toHaveLength(3);
      // Full jitter with random() = 0.5: half of 500 ms, then half of 1000 ms.
      expect(h.slept).toEqual([250, 500]);
    });

    it('retries a network error, then succeeds', async () => {
      const h = harness([leakyFetchError(), reply(200)]);
      await expect(h.notify(sample)).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(h.requests).toHaveLength(2);
    });

    it('gives up after 4 attempts of 5xx and says so', async () => {
      const h = harness([reply(503), reply(503), reply(503), reply(503), reply(200)]);
      const error = await failureOf(h.notify(sample));
      expect((error as Error).message).toContain('Slack webhook: HTTP 503 (after 4 attempts)');
      expect(h.requests).toHaveLength(4);
    });

    it.each([400, 401, 403, 404, 410])('does not retry a %i', async (status) => {
      const h = harness([reply(status, 'no_service'), reply(200)]);
      const error = await failureOf(h.notify(sample));
      expect((error as Error).message).toContain(`HTTP ${status} no_service (after 1 attempt)`);
      expect(h.requests).toHaveLength(1);
      expect(h.slept).toEqual([]);
    });
  });

  describe('secrecy of the webhook URL', () => {
    it.each<[string, (WebhookResponse | Error)[], boolean]>([
      ['a successful post', [reply(200)], false],
      ['5xx until the attempts are spent', [reply(500), reply(502), reply(503), reply(504)], true],
      [
        'a fetch that rejects with the URL in its message and cause',
        [leakyFetchError(), leakyFetchError(), leakyFetchError(), leakyFetchError()],
        true,
      ],
    ])('never logs or throws the URL after %s', async (_case, script, fails) => {
      const h = harness(script);
      const outcome = await h.notify(sample).then(
        (result) => JSON.stringify(result),
        (error: unknown) => everythingIn(error),
      );
      // The log must not be empty, or the assertion below would prove nothing.
      expect(h.logText()).toContain(fails ? 'alert not delivered to Slack' : 'alert delivered to Slack');
      for (const text of [h.logText(), outcome]) {
        expect(text).not.toContain(WEBHOOK_URL);
        expect(text).not.toContain(SECRET);
      }
    });

    it.each<[string, string, (WebhookResponse | Error)[]]>([
      ['a URL that does not parse', `hooks.slack.com/${SECRET}`, []],
      ['a URL that is not https', WEBHOOK_URL.replace('https:', 'http:'), []],
      ['a fetch that rejects with the URL', WEBHOOK_URL, Array.from({ length: 4 }, leakyFetchError)],
    ])('postToWebhook throws a WebhookError free of the URL for %s', async (_case, url, script) => {
      const fetch: WebhookFetch = () => {
        const next = script.shift() ?? reply(200);
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      };
      const error = await failureOf(
        postToWebhook(
          url,
          formatEvent(stalled, RUNBOOK),
          { fetch, sleep: () => Promise.resolve(), random: () => 0 },
          DEFAULT_WEBHOOK_OPTIONS,
        ),
      );
      expect(error).toBeInstanceOf(WebhookError);
      expect(everythingIn(error)).not.toContain(SECRET);
    });

    it('does not quote a parameter value that is not a URL', async () => {
      ssm
        .on(GetParameterCommand)
        .resolves({ Parameter: { Name: PARAM, Type: 'SecureString', Value: `hooks.slack.com/${SECRET}` } });
      const h = harness();
      const error = await failureOf(h.notify(sample));
      expect((error as Error).message).toContain('the configured URL does not parse');
      expect(everythingIn(error) + h.logText()).not.toContain(SECRET);
    });
  });

  describe('webhook URL parameter', () => {
    it('reads the SecureString once, decrypted, across two invocations', async () => {
      const h = harness();
      await h.notify(sample);
      await h.notify(sample);
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
      expect(ssm).toHaveReceivedCommandWith(GetParameterCommand, { Name: PARAM, WithDecryption: true });
      expect(h.requests).toHaveLength(2);
    });

    it('rereads it once the cache has expired, so a rotated URL is used', async () => {
      const h = harness();
      await h.notify(sample);
      h.advance(5 * 60_000);
      ssm
        .on(GetParameterCommand)
        .resolves({ Parameter: { Name: PARAM, Type: 'SecureString', Value: `${WEBHOOK_URL}-rotated` } });
      await h.notify(sample);
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
      expect(h.requests[1]?.url).toBe(`${WEBHOOK_URL}-rotated`);
    });

    it('rereads it after a failed delivery, in case the URL was revoked', async () => {
      const h = harness([reply(404, 'no_service')]);
      await failureOf(h.notify(sample));
      await h.notify(sample);
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
    });
  });

  describe('handler', () => {
    it('reads SLACK_WEBHOOK_PARAMETER and posts the shipped console event', async () => {
      process.env.SLACK_WEBHOOK_PARAMETER = PARAM;
      const fetch = jest.spyOn(globalThis, 'fetch').mockResolvedValue(new Response('ok', { status: 200 }));
      await expect(handler(sample)).resolves.toEqual({ delivered: 1, rejected: [] });
      expect(ssm).toHaveReceivedCommandWith(GetParameterCommand, { Name: PARAM, WithDecryption: true });
      expect(fetch).toHaveBeenCalledWith(WEBHOOK_URL, expect.objectContaining({ method: 'POST' }));
    });

    it.each([
      ['RUNBOOK_URL', RUNBOOK, RUNBOOK],
      ['the placeholder without it', undefined, RUNBOOK_URL_PLACEHOLDER],
    ])('links the runbook at %s', async (_case, env, base) => {
      process.env.SLACK_WEBHOOK_PARAMETER = PARAM;
      if (env === undefined) delete process.env.RUNBOOK_URL;
      else process.env.RUNBOOK_URL = env;
      const fetch = jest.spyOn(globalThis, 'fetch').mockResolvedValue(new Response('ok', { status: 200 }));
      await handler(sample);
      const body = (fetch.mock.calls[0]?.[1] as { body: string }).body;
      expect(body).toContain(`<${base}#stalled|What STALLED means and what to do>`);
    });

    it('throws ValidationError naming RUNBOOK_URL when it is no http(s) URL', async () => {
      process.env.SLACK_WEBHOOK_PARAMETER = PARAM;
      process.env.RUNBOOK_URL = 'file:///etc/runbook.md';
      const error = await failureOf(handler(sample));
      expect((error as ValidationError).field).toBe('RUNBOOK_URL');
    });

    it('throws ValidationError naming SLACK_WEBHOOK_PARAMETER when it is missing', async () => {
      delete process.env.SLACK_WEBHOOK_PARAMETER;
      const error = await failureOf(handler(sample));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('SLACK_WEBHOOK_PARAMETER');
    });
  });
});
