import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { loadConfig } from '../../lib/config';
import { ClientFactory } from '../../lib/aws/clients';
import { nodeOfHeartbeatKey } from '../../lib/core/keys';
import { createLogger } from '../../lib/log';
import { buildWatchdogDeps } from '../../lib/watchdog/build';
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
  return buildWatchdogDeps(config, new ClientFactory({ region: config.region }), createLogger('watchdog'));
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
