import type { Context } from 'aws-lambda';
import { loadConfig } from '../../lib/config';
import { ClientFactory } from '../../lib/aws/clients';
import { parseReplayRequest } from '../../lib/core/replay-input';
import { describePlan } from '../../lib/core/replay-text';
import { createLogger } from '../../lib/log';
import { runReplay, type ReplayResult } from '../../lib/replay/run';
import { buildWatchdogDeps } from '../../lib/watchdog/build';
import type { WatchdogDeps } from '../../lib/watchdog/deps';

/**
 * Replays a failover event from the Lambda console. The test event is an alert as published,
 * an event object from `peer-sync/events/`, or `{ "eventId": "…" }` (samples in ./events/).
 * A dry run unless the input says `"execute": true`; the result's `text` is the plan to read.
 */
let deps: WatchdogDeps | undefined;

export const handler = async (input: unknown, _context?: Context): Promise<ReplayResult & { text: string[] }> => {
  const request = parseReplayRequest(input);
  if (deps === undefined) {
    const config = loadConfig();
    deps = buildWatchdogDeps(config, new ClientFactory({ region: config.region }), createLogger('replay'));
  }
  const result = await runReplay(deps, request);
  const text = [...describePlan(result.plan, result.mode), ...result.executed.map((e) => `done: ${e}`)];
  deps.log.info({ event: result.plan.eventId, mode: result.mode, verdict: result.plan.verdict, executed: result.executed }, text[0] ?? 'replay');
  return { ...result, text };
};

/** Test hook: forget the cached dependencies so the next call rereads the environment. */
export const resetForTests = (): void => {
  deps = undefined;
};
