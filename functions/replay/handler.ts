import type { Context } from 'aws-lambda';
import { ClientFactory } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { createLogger, withLogFields } from '../../lib/log';
import { createReplayHandler, type ReplayHandler } from '../../lib/control/replay/handler';
import type { ReplayResult } from '../../lib/control/replay/run';
import { buildWatchdogDeps } from '../../lib/control/watchdog/build';

/**
 * Replays a failover event from the Lambda console (samples in ./events/). Its dependencies are
 * built once per container, from the environment, after the input was checked.
 */
let run: ReplayHandler | undefined;

export const handler = async (input: unknown, context?: Context): Promise<ReplayResult & { text: string[] }> => {
  run ??= createReplayHandler(() => {
    const config = loadConfig();
    return buildWatchdogDeps(config, new ClientFactory({ region: config.region }), createLogger('replay'));
  });
  const built = run;
  return withLogFields({ requestId: context?.awsRequestId }, () => built(input));
};

/** Test hook: forget the built dependencies so the next call rereads the environment. */
export const resetForTests = (): void => {
  run = undefined;
};
