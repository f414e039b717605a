import { AlertTopic } from '../../aws/alerts';
import type { ClientFactory } from '../../aws/clients';
import { OriginRecord } from '../../aws/dns';
import { InstanceProbe } from '../../aws/instances';
import { RunCommand } from '../../aws/run-command';
import { stateStoreFor, type StateStore } from '../../aws/state-store';
import type { Config } from '../../core/config';
import { describeError } from '../../core/errors';
import type { Logger } from '../../log';
import { sleep } from '../../sleep';
import type { WatchdogDeps } from './deps';

/** The state store of a configuration. */
const stateStore = (config: Config, clients: ClientFactory): StateStore =>
  stateStoreFor(config, clients.s3());

/**
 * Everything the watchdog's steps need, from one configuration and one client factory: shared
 * by the watchdog and replay functions and by the operator CLI, so all three act alike.
 */
export const buildWatchdogDeps = (config: Config, clients: ClientFactory, log: Logger): WatchdogDeps => ({
  config,
  store: stateStore(config, clients),
  alerts: config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn),
  commands: new RunCommand(clients.ssm()),
  probe: new InstanceProbe(clients.lightsail(), clients.ssm(), (call, error) => log.warn({ err: describeError(error) }, `${call} failed: that opinion counts as unknown`)),
  dns:
    config.hostedZoneId === undefined || config.recordName === undefined
      ? null
      : new OriginRecord(clients.route53(), { hostedZoneId: config.hostedZoneId, recordName: config.recordName, type: config.recordType, ttl: config.recordTtl }),
  log,
  now: Date.now,
  sleep,
  sight: { failing: false },
});
