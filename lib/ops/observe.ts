import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { TaskQueue } from '../aws/queue';
import type { StateStore } from '../aws/state-store';
import type { NodeSpec } from '../core/config';
import { CorruptObjectError, describeError } from '../core/errors';
import { KEYS, nodeOfHeartbeatKey, PREFIXES } from '../core/keys';
import type { HeartbeatObservation, Observed } from '../core/views/observed';
import { heartbeatSchema, leaderSchema } from '../core/schemas';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import type { ManualFailoverInput } from '../core/views/manual-failover';
import type { QueueObservation } from '../core/views/status';
import type { Logger } from '../log';
import { buildWatchdogDeps } from '../control/watchdog/build';
import type { WatchdogDeps } from '../control/watchdog/deps';
import type { Target } from './target';

/** What operator commands act through: the watchdog's own adapters, plus the task queue. */
export interface OpsDeps extends WatchdogDeps {
  /** The task queue, or null when queueUrl is not configured. */
  queue: TaskQueue | null;
  /** Another queue of the same account (the dead-letter queue). */
  queueAt: (url: string) => TaskQueue;
}

/** Builds the adapters once per command, the same way the watchdog builds its own. */
export const opsDeps = (target: Target, log: Logger): OpsDeps => {
  const { config, clients } = target;
  const queueAt = (url: string): TaskQueue => new TaskQueue(clients.sqs(), url);
  return {
    ...buildWatchdogDeps(config, clients, log),
    queue: config.queueUrl === undefined ? null : queueAt(config.queueUrl),
    queueAt,
  };
};

/** Reads one object: missing and corrupt are results, any other error (unreachable, denied) throws. */
export const observeObject = async <S extends z.ZodType>(
  store: StateStore,
  key: string,
  schema: S,
): Promise<Observed<z.output<S>>> => {
  try {
    const got = await store.read(key, schema);
    return got === null ? { state: 'missing' } : { state: 'ok', value: got.value };
  } catch (error) {
    if (error instanceof CorruptObjectError) return { state: 'corrupt', error: error.message };
    throw error;
  }
};

/**
 * The heartbeat of every configured node with S3's time of its last write: one LIST of
 * `nodes/` gives the times (and which objects exist), then one GET per listed node.
 */
export const observeHeartbeats = async (
  store: StateStore,
  nodes: readonly NodeSpec[],
): Promise<{ heartbeats: Map<string, HeartbeatObservation>; strays: string[]; serverNow: number | null }> => {
  const written = new Map<string, number | null>();
  const { entries, serverNow } = await store.listWithClock(PREFIXES.heartbeats);
  for (const entry of entries) {
    const node = nodeOfHeartbeatKey(entry.key);
    if (node !== null) written.set(node, entry.lastModified);
  }
  const heartbeats = new Map<string, HeartbeatObservation>();
  await Promise.all(
    nodes.map(async (spec) => {
      const listed = written.has(spec.name);
      const heartbeat = listed
        ? await observeObject(store, KEYS.heartbeat(spec.name), heartbeatSchema)
        : ({ state: 'missing' } as const);
      heartbeats.set(spec.name, { heartbeat, writtenAt: written.get(spec.name) ?? null });
    }),
  );
  const strays = [...written.keys()].filter((name) => !nodes.some((n) => n.name === name)).sort();
  return { heartbeats, strays, serverNow };
};

/**
 * What a move of the primary role (`fleet failover`, `fleet switchover`) is planned on: the lease,
 * the watchdog's state and the heartbeats, read at once.
 */
export const observeHandover = async (deps: OpsDeps, to: string, force: boolean): Promise<ManualFailoverInput> => {
  const { store, config } = deps;
  const [leader, watchdog, { heartbeats, serverNow }] = await Promise.all([
    observeObject(store, KEYS.leader, leaderSchema),
    observeObject(store, KEYS.watchdogState, watchdogStateSchema),
    observeHeartbeats(store, config.nodes),
  ]);
  return {
    ...{ to, force, nodes: config.nodes, leader, heartbeats, watchdog },
    // Freshness compares S3's Last-Modified with S3's clock (invariant 4), not with this machine's.
    now: serverNow ?? deps.now(),
    sampleMs: config.sampleIntervalSeconds * 1000,
    keepAliveMs: config.heartbeatKeepAliveSeconds * 1000,
    nonce: randomBytes(4).toString('hex'),
  };
};

/** The queue's depth, or why it could not be read; never throws. */
export const observeQueue = async (queue: TaskQueue | null): Promise<QueueObservation> => {
  if (queue === null) return { state: 'not-configured' };
  try {
    return { state: 'ok', ...(await queue.backlog()) };
  } catch (error) {
    return { state: 'error', error: describeError(error) };
  }
};
