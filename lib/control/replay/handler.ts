import { parseReplayRequest } from '../../core/views/replay-input';
import { describePlan } from '../../core/views/replay-text';
import type { WatchdogDeps } from '../watchdog/deps';
import { runReplay, type ReplayResult } from './run';

export type ReplayHandler = (input: unknown) => Promise<ReplayResult & { text: string[] }>;

/**
 * Replays a failover event (the Lambda console's test event): an alert as published, an event
 * object from `peer-sync/events/`, or `{ "eventId": "…" }`. A dry run unless the input says
 * `"execute": true`; the result's `text` is the plan to read. The dependencies are built on
 * the first valid input.
 */
export const createReplayHandler = (getDeps: () => WatchdogDeps): ReplayHandler => {
  let built: WatchdogDeps | undefined;
  return async (input) => {
    // Bad input is refused before anything is built or read.
    const request = parseReplayRequest(input);
    const deps = (built ??= getDeps());
    const result = await runReplay(deps, request);
    const text = [...describePlan(result.plan, result.mode), ...result.executed.map((e) => `done: ${e}`)];
    deps.log.info(
      { event: result.plan.eventId, mode: result.mode, verdict: result.plan.verdict, executed: result.executed },
      text[0] ?? 'replay',
    );
    return { ...result, text };
  };
};
