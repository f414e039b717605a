import { CorruptObjectError, describeError, FleetError } from '../../core/errors';
import { eventOfKey, KEYS, PREFIXES } from '../../core/keys';
import type { BeatRef, Beats } from '../../core/fleet/membership';
import { beatSchema, heartbeatSchema, type Heartbeat } from '../../core/schemas';
import { decide, suspects, type Inputs, type WatchdogAction } from '../../core/fleet/watchdog';
import { emfDocuments } from '../../core/metrics/emf';
import { watchdogMetricValues } from '../../core/metrics/watchdog-metrics';
import { stateDamageEvent } from '../../core/fleet/repair';
import { readsFailureQueues } from '../../core/fleet/dead-letters';
import { seededState, watchdogStateSchema, type WatchdogState } from '../../core/fleet/watchdog-state';
import { emit, findRestart, sendCommand, verify } from './actions';
import { withLogFields } from '../../log';
import type { WatchdogDeps } from './deps';
import { failover } from './failover';
import { route } from './route';
import { readLeader, readLeaderRecord, repairLeader } from './leader';

export { readLeader };

export type { WatchdogDeps };

export interface WatchdogRun {
  nodes: number;
  heartbeats: number;
  rejected: string[];
  actions: string[];
}

/**
 * Reads every configured node's heartbeat; corrupt or foreign ones are reported and skipped. A
 * heartbeat that cannot be read at all throws: the run cannot see that node, and must not take
 * what it cannot see for silence.
 */
export const readHeartbeats = async (
  { store, config, log }: WatchdogDeps,
  rejected: string[],
): Promise<Map<string, Heartbeat>> => {
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
        if (!(error instanceof CorruptObjectError)) throw error;
        rejected.push(`${spec.name}: ${describeError(error)}`);
        log.warn({ node: spec.name, err: describeError(error) }, 'heartbeat rejected');
      }
    }),
  );
  return found;
};

/**
 * Reads every configured node's beat item (control table, one read unit each): a node writes
 * one every sample while it is not the primary, and its heartbeat object only with news. A
 * damaged one is skipped (the heartbeat and the lease still speak for the node); one that
 * cannot be read throws, as a heartbeat does.
 */
export const readBeats = async ({ store, config, log }: WatchdogDeps): Promise<Beats> => {
  const found = new Map<string, BeatRef>();
  await Promise.all(
    config.nodes.map(async (spec) => {
      try {
        const got = await store.read(KEYS.beat(spec.name), beatSchema);
        if (got !== null) found.set(spec.name, got.value);
      } catch (error) {
        if (!(error instanceof CorruptObjectError)) throw error;
        log.warn({ node: spec.name, err: describeError(error) }, 'beat rejected');
      }
    }),
  );
  return found;
};

const quarantine =
  (deps: WatchdogDeps) =>
  async (error: CorruptObjectError): Promise<void> => {
    await deps.store.quarantine(KEYS.watchdogState, error.message, deps.now());
    deps.log.error({ err: error.message }, 'watchdog state corrupt: copied aside and rebuilt from the next samples');
  };

/** The state a rebuild starts from: incident numbers carried on from the events written (seededState). */
const seed = async (deps: WatchdogDeps): Promise<WatchdogState> => {
  const ids = (await deps.store.list(PREFIXES.events)).flatMap((key) => eventOfKey(key)?.incidentId ?? []);
  return seededState(ids);
};

const carryOutAction = async (deps: WatchdogDeps, action: WatchdogAction): Promise<void> => {
  switch (action.kind) {
    case 'publish':
      await emit(deps, action.event);
      return;
    case 'command':
      await sendCommand(deps, action);
      return;
    case 'verify':
      await verify(deps, action);
      return;
    case 'find-restart':
      await findRestart(deps, action);
      return;
    case 'failover':
      await failover(deps, action);
      return;
    case 'route':
      await route(deps, action);
      return;
    case 'repair-leader':
      await repairLeader(deps, action);
      return;
    case 'admit': {
      const moved = (await deps.intake?.admit(action.count)) ?? 0;
      deps.log.info({ asked: action.count, moved }, 'admitted from the intake queue');
      return;
    }
  }
};

const describeAction = (action: WatchdogAction): string => {
  switch (action.kind) {
    case 'publish':
      return `publish ${action.event.kind} ${action.event.node}`;
    case 'route':
      return `route ${action.primary}`;
    case 'admit':
      return `admit ${action.count}`;
    case 'repair-leader':
      return `repair-leader ${action.leader?.primary ?? '(nobody yet)'}`;
    default:
      return `${action.kind} ${action.node}`;
  }
};

/** What one attempt gathered: the state it judges and everything read for the judgement. */
interface Gathered {
  state: WatchdogState;
  inputs: Inputs;
  damaged: CorruptObjectError | null;
  /** Heartbeats that were corrupt or named another node. */
  rejected: string[];
}

/**
 * Reads the leader record, every heartbeat and beat, asks Lightsail and SSM about the nodes
 * judged gone, and reads the queues' depths on admitting runs. Only I/O; `decide` judges.
 */
const gather = async (
  deps: WatchdogDeps,
  state: WatchdogState,
  admit: boolean,
  rejected: string[],
): Promise<Inputs> => {
  const [record, heartbeats, beats] = await Promise.all([
    readLeaderRecord(deps),
    readHeartbeats(deps, rejected),
    readBeats(deps),
  ]);
  const now = deps.now();
  const seen: Inputs = {
    now,
    leader: record.leader,
    heartbeats,
    beats,
    blind: deps.sight.failing,
    damage: record.damage,
  };
  const settings = deps.config;
  const asked = await Promise.all(
    suspects(state, seen, settings).flatMap((name) => {
      const spec = settings.nodes.find((n) => n.name === name);
      return spec === undefined ? [] : [deps.probe.confirm(spec).then((c) => [name, c] as const)];
    }),
  );
  if (!admit || deps.intake === null) return { ...seen, confirmations: new Map(asked) };
  // Queue depths that cannot be read leave admission as it is this run (nothing admitted).
  const failureQueues = readsFailureQueues(now, settings.watchdogScheduleSeconds * 1000);
  const depths = await deps.intake.depths({ failureQueues }).catch((error: unknown) => {
    deps.log.warn({ err: describeError(error) }, 'queue depths unreadable: nothing admitted this run');
    return null;
  });
  return { ...seen, confirmations: new Map(asked), depths };
};

/** The incident an action is a step of, if any. */
const incidentOf = (action: WatchdogAction): string | undefined =>
  'incidentId' in action ? action.incidentId : action.kind === 'publish' ? action.event.incidentId : undefined;

/**
 * One watchdog invocation: gather, decide, store the verdict by CAS (a run that loses gathers
 * and decides again, and finds the samples already judged), then act on what the write claimed.
 */
export const runWatchdog = async (deps: WatchdogDeps, options: { admit?: boolean } = {}): Promise<WatchdogRun> => {
  const settings = { ...deps.config, routed: deps.dns !== null };
  let outcome: { result: { gathered: Gathered; decided: ReturnType<typeof decide> } };
  try {
    outcome = await deps.store.update(
      KEYS.watchdogState,
      watchdogStateSchema,
      (_current, gathered: Gathered) => {
        const decided = decide(gathered.state, gathered.inputs, settings);
        return { value: decided.changed ? decided.state : null, result: { gathered, decided } };
      },
      quarantine(deps),
      async (current, damaged): Promise<Gathered> => {
        const state = current ?? (await seed(deps));
        const rejected: string[] = [];
        return { state, inputs: await gather(deps, state, options.admit !== false, rejected), damaged, rejected };
      },
    );
  } catch (error) {
    // The next run that gets through judges no silence it could not see.
    deps.sight.failing = true;
    throw error;
  }
  deps.sight.failing = false;
  const { gathered, decided } = outcome.result;
  const damage = gathered.damaged;
  const leader = gathered.inputs.leader;
  const now = gathered.inputs.now;
  const stateDamage =
    damage === null
      ? []
      : [
          {
            kind: 'publish' as const,
            event: stateDamageEvent(damage.etag, damage.message, leader?.primary ?? null, deps.now()),
          },
        ];
  const actions: WatchdogAction[] = [...stateDamage, ...decided.actions];
  const done: string[] = [];
  const carried: WatchdogAction[] = [];
  for (const action of actions) {
    // Every line written for an incident's step, its failure included, names the incident.
    await withLogFields({ incidentId: incidentOf(action) }, async () => {
      try {
        await carryOutAction(deps, action);
        carried.push(action);
        done.push(describeAction(action));
      } catch (error) {
        deps.log.error(
          { err: describeError(error), action: action.kind },
          'watchdog action failed; the next invocation retries what is still due',
        );
        if (!(error instanceof FleetError)) throw error;
      }
    });
  }
  if (deps.config.metrics !== 'off') {
    const { heartbeats, beats } = gathered.inputs;
    const judged = {
      before: gathered.state,
      after: decided.state,
      leader,
      heartbeats,
      beats,
      now,
      nodes: deps.config.nodes,
    };
    const values = watchdogMetricValues({ ...judged, settings, done: carried, gauges: options.admit !== false });
    for (const doc of emfDocuments(deps.config.metrics, deps.config.bucket, deps.now(), values))
      deps.metrics(JSON.stringify(doc));
  }
  return {
    nodes: deps.config.nodes.length,
    heartbeats: gathered.inputs.heartbeats.size,
    rejected: gathered.rejected,
    actions: done,
  };
};
