import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { ClientFactory } from '../../lib/aws/clients';
import { SecureParameter } from '../../lib/aws/parameters';
import { RUNBOOK_URL_PLACEHOLDER, runbookUrlSchema } from '../../lib/core/runbook';
import { parseWith } from '../../lib/core/validate';
import { createLogger, withLogFields } from '../../lib/log';
import { createNotifier, type Notifier, type NotifierResult } from '../../lib/control/notifier/notify';
import { sleep } from '../../lib/sleep';

export {
  createNotifier,
  type Notifier,
  type NotifierDeps,
  type NotifierResult,
} from '../../lib/control/notifier/notify';

/**
 * The Slack notifier, subscribed to the alert topic. Its own environment, not the fleet's: it
 * needs no FLEET_* setting, only where the webhook URL lives and the runbook its messages link.
 */
const envSchema = z.object({
  SLACK_WEBHOOK_PARAMETER: z.string().regex(/^[A-Za-z0-9_.\-/]{1,2048}$/, 'must be an SSM parameter name'),
  // Empty is unset, as for the fleet's own variables.
  RUNBOOK_URL: z.union([z.literal(''), runbookUrlSchema]).optional(),
  AWS_REGION: z.string().min(1),
});

let notifier: Notifier | undefined;

const build = (env: NodeJS.ProcessEnv = process.env): Notifier => {
  const config = parseWith(envSchema, env, 'notifier environment');
  const clients = new ClientFactory({ region: config.AWS_REGION });
  return createNotifier({
    fetch: fetch,
    webhookUrl: new SecureParameter(clients.ssm(), config.SLACK_WEBHOOK_PARAMETER),
    log: createLogger('notifier'),
    sleep: (ms) => sleep(ms),
    random: Math.random,
    now: Date.now,
    runbookUrl:
      config.RUNBOOK_URL === undefined || config.RUNBOOK_URL === '' ? RUNBOOK_URL_PLACEHOLDER : config.RUNBOOK_URL,
  });
};

/** Lambda entry point, subscribed to the alert topic. */
export const handler = async (event: unknown, context?: Context): Promise<NotifierResult> => {
  notifier ??= build();
  const built = notifier;
  return withLogFields({ requestId: context?.awsRequestId }, () => built(event));
};

/** Test hook: forget the cached notifier so the next call rereads the environment. */
export const resetForTests = (): void => {
  notifier = undefined;
};
