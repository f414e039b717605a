import type { Config } from '../core/config';
import { describeError, type CorruptObjectError, ConflictError, FleetError, NotFoundError } from '../core/errors';
import { eventKey, type FleetEvent } from '../core/events';
import { KEYS } from '../core/keys';
import { heartbeatSchema, leaderSchema, type Heartbeat, type Leader } from '../core/schemas';
import { decide, markRestartResult, markRestartSent, type WatchdogAction } from '../core/watchdog';
import { emptyWatchdogState, watchdogStateSchema, type WatchdogState } from '../core/watchdog-state';
import type { AlertTopic } from '../aws/alerts';
import type { RunCommand } from '../aws/run-command';
import type { StateStore } from '../aws/state-store';
import type { Logger } from '../log';

/** Everything one watchdog invocation needs; built once per Lambda container. */
export interface WatchdogDeps {
  config: Config;
  store: StateStore;
  alerts: AlertTopic | null;
  commands: RunCommand;
  log: Logger;
  now: () => number;
}

export interface WatchdogRun {
  nodes: number;
  heartbeats: number;
  rejected: string[];
  actions: string[];
}

/** Reads the primary's record; a missing or corrupt one means "no primary to judge". */
const readLeader = async ({ store, log }: WatchdogDeps): Promise<Leader | null> => {
  try {
    return (await store.read(KEYS.leader, leaderSchema))?.value ?? null;
  } catch (error) {
    log.error({ err: describeError(error) }, 'leader record unreadable; judging no primary this round');
    return null;
  }
};

/** Reads every configured node's heartbeat; bad ones are reported and skipped. */
const readHeartbeats = async ({ store, config, log }: WatchdogDeps, rejected: string[]): Promise<Map<string, Heartbeat>> => {
  const found = new Map<string, Heartbeat>();
  await Promise.all(
    config.nodes.map(async (spec) => {
      try {
        const hb = await store.read(KEYS.heartbeat(spec.name), heartbeatSchema);
        if (hb === null) return;
        if (hb.value.node !== spec.name) {
          rejected.push(`${spec.name}: heartbeat claims node ${hb.value.node}`);
          log.warn({ node: spec.name, claimed: hb.value.node }, 'heartbeat names another node; ignored');
          return;
        }
        found.set(spec.name, hb.value);
      } catch (error) {
        rejected.push(`${spec.name}: ${describeError(error)}`);
        log.warn({ node: spec.name, err: describeError(error) }, 'heartbeat rejected');
      }
    }),
  );
  return found;
};

/** Writes the event once (If-None-Match: *) and alerts only if this call created it. */
export const emit = async ({ store, alerts, log }: WatchdogDeps, event: FleetEvent): Promise<boolean> => {
  try {
    await store.create(eventKey(event), event);
  } catch (error) {
    if (error instanceof ConflictError) return false;
    throw error;
  }
  log.info({ event: event.kind, node: event.node, incident: event.incidentId }, event.summary);
  if (alerts !== null) {
    try {
      await alerts.publish(event);
    } catch (error) {
      log.error({ err: describeError(error), event: event.id }, 'alert not published; the event object stands');
    }
  }
  return true;
};

const quarantine = (deps: WatchdogDeps) => async (error: CorruptObjectError): Promise<void> => {
  const at = deps.now();
  const text = await deps.store.readText(KEYS.watchdogState).catch(() => null);
  await deps.store.put(KEYS.quarantine(KEYS.watchdogState, at), { reason: error.message, text });
  deps.log.error({ err: error.message }, 'watchdog state corrupt: copied aside and rebuilt from the next samples');
};

/** Applies an outcome reducer by CAS and emits its event. */
const record = async (deps: WatchdogDeps, reduce: (s: WatchdogState) => { state: WatchdogState; event: FleetEvent } | null): Promise<void> => {
  const { result } = await deps.store.update(KEYS.watchdogState, watchdogStateSchema, (current) => {
    const out = reduce(current ?? emptyWatchdogState());
    return { value: out?.state ?? null, result: out?.event ?? null };
  });
  if (result !== null) await emit(deps, result);
};

const restart = async (deps: WatchdogDeps, a: Extract<WatchdogAction, { kind: 'restart' }>): Promise<void> => {
  let commandId: string;
  try {
    commandId = await deps.commands.send(a.instanceId, 'restartWorker', `queen-fleet ${a.incidentId}`);
  } catch (error) {
    await record(deps, (s) => markRestartResult(s, a.node, a.incidentId, false, `not delivered: ${describeError(error)}`, deps.now()));
    return;
  }
  await record(deps, (s) => markRestartSent(s, a.node, a.incidentId, commandId, deps.now()));
};

const verify = async (deps: WatchdogDeps, a: Extract<WatchdogAction, { kind: 'verify' }>): Promise<void> => {
  let outcome: { ok: boolean; detail: string } | null = null;
  try {
    const res = await deps.commands.result(a.commandId, a.instanceId);
    if (res.status === 'succeeded' || res.status === 'failed') outcome = { ok: res.status === 'succeeded', detail: res.detail };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  if (outcome === null && deps.now() > a.deadline) outcome = { ok: false, detail: 'no result before the verification deadline' };
  if (outcome !== null) {
    const { ok, detail } = outcome;
    await record(deps, (s) => markRestartResult(s, a.node, a.incidentId, ok, detail, deps.now()));
  }
};

const carryOut = async (deps: WatchdogDeps, action: WatchdogAction): Promise<void> => {
  switch (action.kind) {
    case 'publish':
      await emit(deps, action.event);
      return;
    case 'restart':
      await restart(deps, action);
      return;
    case 'verify':
      await verify(deps, action);
      return;
  }
};

/**
 * One watchdog invocation: gather heartbeats and the leader record, let the core decide,
 * store the verdict by CAS (a concurrent invocation that loses re-reads and finds the samples
 * already judged), then carry out the actions the winning write claimed.
 */
export const runWatchdog = async (deps: WatchdogDeps): Promise<WatchdogRun> => {
  const rejected: string[] = [];
  const [leader, heartbeats] = await Promise.all([readLeader(deps), readHeartbeats(deps, rejected)]);
  const now = deps.now();
  const { result: actions } = await deps.store.update(
    KEYS.watchdogState,
    watchdogStateSchema,
    (current) => {
      const verdict = decide(current ?? emptyWatchdogState(), leader, heartbeats, now, deps.config);
      return { value: verdict.changed ? verdict.state : null, result: verdict.actions };
    },
    quarantine(deps),
  );
  const done: string[] = [];
  for (const action of actions) {
    try {
      await carryOut(deps, action);
      done.push(action.kind === 'publish' ? `publish ${action.event.kind} ${action.event.node}` : `${action.kind} ${action.node}`);
    } catch (error) {
      deps.log.error({ err: describeError(error), action: action.kind }, 'watchdog action failed; the next invocation retries what is still due');
      if (!(error instanceof FleetError)) throw error;
    }
  }
  return { nodes: deps.config.nodes.length, heartbeats: heartbeats.size, rejected, actions: done };
};
