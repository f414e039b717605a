import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { loadConfig } from '../../lib/config';
import { ClientFactory } from '../../lib/aws/clients';
import { AlertTopic } from '../../lib/aws/alerts';
import { OriginRecord } from '../../lib/aws/dns';
import { InstanceProbe } from '../../lib/aws/instances';
import { RunCommand } from '../../lib/aws/run-command';
import { StateStore } from '../../lib/aws/state-store';
import { nodeOfHeartbeatKey } from '../../lib/core/keys';
import { createLogger } from '../../lib/log';
import { sleep } from '../../lib/sleep';
import { runWatchdog, type WatchdogDeps, type WatchdogRun } from '../../lib/watchdog/run';

/**
 * The watchdog runs on two triggers: S3 notifications for heartbeat writes (the verdict comes
 * within seconds of the sample that completes a window) and a one-minute EventBridge schedule
 * (the dead-man check when heartbeats stop). Both evaluate every node; the event only matters
 * for logging and for ignoring keys of nodes the fleet does not know.
 */
const s3EventSchema = z.object({
  Records: z.array(z.object({ s3: z.object({ object: z.object({ key: z.string() }) }) })),
});

let deps: WatchdogDeps | undefined;

const build = (): WatchdogDeps => {
  const config = loadConfig();
  const clients = new ClientFactory({ region: config.region });
  return {
    config,
    store: new StateStore(clients.s3(), { bucket: config.bucket, prefix: config.prefix, maxObjectBytes: config.maxObjectBytes }),
    alerts: config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn),
    commands: new RunCommand(clients.ssm()),
    probe: new InstanceProbe(clients.lightsail(), clients.ssm()),
    dns:
      config.hostedZoneId === undefined || config.recordName === undefined
        ? null
        : new OriginRecord(clients.route53(), { hostedZoneId: config.hostedZoneId, recordName: config.recordName, type: config.recordType, ttl: config.recordTtl }),
    log: createLogger('watchdog'),
    now: Date.now,
    sleep,
  };
};

export const handler = async (event: unknown, _context?: Context): Promise<WatchdogRun> => {
  deps ??= build();
  const s3 = s3EventSchema.safeParse(event);
  if (s3.success) {
    const known = new Set(deps.config.nodes.map((n) => n.name));
    const keys = s3.data.Records.map((r) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
    const unknown = keys.filter((k) => !known.has(nodeOfHeartbeatKey(k) ?? ''));
    if (unknown.length > 0) deps.log.warn({ keys: unknown }, 'notification for a key that is not a known node heartbeat; ignored');
    if (unknown.length === keys.length) return { nodes: known.size, heartbeats: 0, rejected: unknown, actions: [] };
  }
  return runWatchdog(deps);
};

/** Test hook: forget the cached dependencies so the next call rereads the environment. */
export const resetForTests = (): void => {
  deps = undefined;
};
