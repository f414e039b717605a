import { FleetError } from '../../core/errors';
import { retry, type RetryDeps, type RetryPolicy } from '../../core/retry';
import type { SlackPayload } from '../../core/views/slack-message';

/**
 * Slack incoming webhooks. The URL is the secret (whoever has it can post to the channel), so
 * nothing here ever puts it in an error: fetch/undici errors may quote it in their message or
 * cause, and Node's URL errors carry it as `input`, so those are replaced, never wrapped.
 */

/** The part of a fetch Response the poster reads; the global Response satisfies it. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The request the poster sends; the global RequestInit accepts it. */
export interface WebhookRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

/** A fetch function; the global `fetch` of Node 22 satisfies it. */
export type WebhookFetch = (url: string, init: WebhookRequest) => Promise<WebhookResponse>;

/** A webhook post that failed. Its message holds the HTTP status and Slack's error code only. */
export class WebhookError extends FleetError {
  constructor(
    message: string,
    /** HTTP status, or null when no response came (network error, timeout). */
    readonly status: number | null,
    /** True for 429, 5xx and network errors: a later attempt may succeed. */
    readonly retryable: boolean,
    /** The server's Retry-After, capped, in ms. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** Tuning of the poster. */
export interface WebhookOptions {
  policy: RetryPolicy;
  /** Per attempt, headers and body included. */
  timeoutMs: number;
  /** A Retry-After above this is cut down to it, so one answer cannot outlast the Lambda. */
  retryAfterCapMs: number;
}

/**
 * Worst case 4 × 4 s attempts + 3 × 3 s waits = 25 s: inside the notifier's 30 s timeout, so
 * an exhausted post still ends in a clean error instead of a Lambda timeout.
 */
export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  policy: { attempts: 4, baseMs: 500, capMs: 2_000 },
  timeoutMs: 4_000,
  retryAfterCapMs: 3_000,
};

/** What the poster needs from outside. */
export interface WebhookDeps extends RetryDeps {
  fetch: WebhookFetch;
}

/** Slack answers errors with a short code (`invalid_payload`, `no_service`); anything else is dropped. */
const slackCode = async (response: WebhookResponse): Promise<string> => {
  try {
    const body = (await response.text()).trim();
    return /^[a-z_]{1,64}$/.test(body) ? ` ${body}` : '';
  } catch {
    return '';
  }
};

/** Names and codes of a fetch error and its cause (`TypeError, ECONNRESET`): identifiers only, so no URL. */
const networkReason = (error: unknown): string => {
  const e = error as { name?: unknown; code?: unknown; cause?: { name?: unknown; code?: unknown } } | null;
  const parts = [e?.name, e?.code, e?.cause?.name, e?.cause?.code].filter(
    (p): p is string => typeof p === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(p),
  );
  return parts.length === 0 ? 'unknown error' : [...new Set(parts)].join(', ');
};

/** Retry-After in seconds (Slack's form); the HTTP-date form falls back to our own back-off. */
const retryAfterMs = (header: string | null, capMs: number): number | null =>
  header !== null && /^\d+(\.\d+)?$/.test(header.trim()) ? Math.min(Number(header.trim()) * 1000, capMs) : null;

const checkUrl = (url: string): void => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookError('Slack webhook: the configured URL does not parse', null, false);
  }
  if (parsed.protocol !== 'https:')
    throw new WebhookError('Slack webhook: the configured URL is not https', null, false);
};

const attemptOnce = async (url: string, body: string, deps: WebhookDeps, options: WebhookOptions): Promise<void> => {
  let response: WebhookResponse;
  try {
    response = await deps.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw new WebhookError(`Slack webhook: request failed (${networkReason(error)})`, null, true);
  }
  // Read the body in every case: it frees the connection, and on errors it holds Slack's code.
  const code = await slackCode(response);
  const { status } = response;
  if (status >= 200 && status < 300) return;
  if (status === 429) {
    throw new WebhookError(
      `Slack webhook: HTTP 429 rate limited${code}`,
      status,
      true,
      retryAfterMs(response.headers.get('retry-after'), options.retryAfterCapMs),
    );
  }
  throw new WebhookError(`Slack webhook: HTTP ${status}${code}`, status, status >= 500);
};

/**
 * Posts `payload` to the webhook, retrying 429 (after at least Retry-After), 5xx and network
 * errors with jittered back-off; other 4xx fail at once. Resolves to the attempts used; rejects
 * with a WebhookError that never contains the URL.
 */
export const postToWebhook = async (
  url: string,
  payload: SlackPayload,
  deps: WebhookDeps,
  options: WebhookOptions = DEFAULT_WEBHOOK_OPTIONS,
): Promise<number> => {
  checkUrl(url);
  const body = JSON.stringify(payload);
  let attempts = 0;
  // Set by shouldRetry, read by the sleep that retry() calls right after it.
  let floorMs = 0;
  const shouldRetry = (error: unknown): boolean => {
    const retryable = error instanceof WebhookError && error.retryable;
    floorMs = retryable ? (error.retryAfterMs ?? 0) : 0;
    return retryable;
  };
  const retryDeps: RetryDeps = { random: deps.random, sleep: (ms) => deps.sleep(Math.max(ms, floorMs)) };
  try {
    await retry(
      async (attempt) => {
        attempts = attempt;
        await attemptOnce(url, body, deps, options);
      },
      shouldRetry,
      options.policy,
      retryDeps,
    );
    return attempts;
  } catch (error) {
    if (!(error instanceof WebhookError)) throw new WebhookError('Slack webhook: unexpected failure', null, false);
    throw new WebhookError(
      `${error.message} (after ${attempts} attempt${attempts === 1 ? '' : 's'})`,
      error.status,
      error.retryable,
      error.retryAfterMs,
    );
  }
};
