import type { Context } from 'aws-lambda';
import { ClientFactory } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { createLogger, withLogFields } from '../../lib/log';
import { buildWatchdogDeps } from '../../lib/control/watchdog/build';
import { createWatchdogHandler, type WatchdogHandler } from '../../lib/control/watchdog/handler';
import type { WatchdogRun } from '../../lib/control/watchdog/run';

/** The Lambda entry point: its dependencies built once per container, from the environment. */
let run: WatchdogHandler | undefined;

export const handler = async (event: unknown, context?: Context): Promise<WatchdogRun> => {
  if (run === undefined) {
    const config = loadConfig();
    run = createWatchdogHandler(
      buildWatchdogDeps(config, new ClientFactory({ region: config.region }), createLogger('watchdog')),
    );
  }
  const built = run;
  // Every line of this invocation carries its request id (and an action's, its incident's).
  return withLogFields({ requestId: context?.awsRequestId }, () => built(event));
};

/** Test hook: forget the built dependencies so the next call rereads the environment. */
export const resetForTests = (): void => {
  run = undefined;
};
