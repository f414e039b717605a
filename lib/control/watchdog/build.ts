import { AlertTopic } from '../../aws/alerts';
import type { ClientFactory } from '../../aws/clients';
import { originRecordFor } from '../../aws/dns';
import { InstanceProbe } from '../../aws/instances';
import { IntakeQueue } from '../../aws/intake';
import { ManagedInstances } from '../../aws/managed-instances';
import { RunCommand } from '../../aws/run-command';
import { stateStoreFor } from '../../aws/stores';
import type { Config } from '../../core/config';
import { describeError } from '../../core/errors';
import type { Logger } from '../../log';
import { sleep } from '../../sleep';
import type { WatchdogDeps } from './deps';

/** One Embedded Metric Format document a line, as it is: a console.log prefix would hide it from CloudWatch. */
const toStandardOutput = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/**
 * Everything the watchdog's steps need, from one configuration and one client factory: shared
 * by the watchdog and replay functions and by the operator CLI, so all three act alike.
 */
export const buildWatchdogDeps = (
  config: Config,
  clients: ClientFactory,
  log: Logger,
  metrics: (line: string) => void = toStandardOutput,
): WatchdogDeps => {
  const instances = new ManagedInstances(clients.ssm(), config);
  return {
    config,
    store: stateStoreFor(config, clients),
    alerts: config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn, config.runbookUrl),
    commands: new RunCommand(clients.ssm(), instances),
    probe: new InstanceProbe(clients.lightsail(), instances, (call, error) =>
      log.warn({ err: describeError(error) }, `${call} failed: that opinion counts as unknown`),
    ),
    dns: originRecordFor(config, clients.route53()),
    intake:
      config.intakeQueueUrl === undefined || config.queueUrl === undefined
        ? null
        : new IntakeQueue(
            clients.sqs(),
            config.intakeQueueUrl,
            config.queueUrl,
            config.deadLetterQueueUrl ?? null,
            config.notifierFailureQueueUrl ?? null,
          ),
    log,
    now: Date.now,
    sleep,
    sight: { failing: false },
    metrics,
  };
};
