import { z } from 'zod';
import { nodeOfHeartbeatKey, underPrefix } from '../../core/keys';
import type { WatchdogDeps } from './deps';
import { runWatchdog, type WatchdogRun } from './run';

/**
 * The watchdog runs on two triggers: S3 notifications for heartbeat writes (the verdict comes
 * within seconds of the sample that completes a window) and a one-minute EventBridge schedule
 * (the dead-man check when heartbeats stop), besides the agents' direct invokes. Every trigger
 * evaluates every node; the event only matters for logging and for ignoring keys of nodes the
 * fleet does not know.
 */
const s3EventSchema = z.object({
  Records: z.array(z.object({ s3: z.object({ object: z.object({ key: z.string() }) }) })),
});

export type WatchdogHandler = (event: unknown) => Promise<WatchdogRun>;

/**
 * A key as S3 notifications encode it (URL-encoded, `+` for a space). A key that is not a valid
 * encoding (a hand-made test event, `%` alone) is kept as it came: it names no known heartbeat,
 * so it is ignored like any other, instead of failing the run with a URIError.
 */
const decodeKey = (key: string): string => {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return key;
  }
};

/** The watchdog's entry point over the dependencies it is given (AWS in Lambda, the local cloud in drills). */
export const createWatchdogHandler =
  (deps: WatchdogDeps): WatchdogHandler =>
  async (event) => {
    const s3 = s3EventSchema.safeParse(event);
    if (s3.success) {
      const known = new Set(deps.config.nodes.map((n) => n.name));
      const keys = s3.data.Records.map((r) => decodeKey(r.s3.object.key));
      const unknown = keys.filter(
        (k) => !known.has(nodeOfHeartbeatKey(underPrefix(deps.config.prefix, k) ?? '') ?? ''),
      );
      if (unknown.length > 0)
        deps.log.warn({ keys: unknown }, 'notification for a key that is not a known node heartbeat; ignored');
      if (unknown.length === keys.length) return { nodes: known.size, heartbeats: 0, rejected: unknown, actions: [] };
    }
    return runWatchdog(deps, { admit: !s3.success });
  };
