import { CorruptObjectError, describeError, FleetError } from '../../core/errors';
import { eventOfKey, KEYS, PREFIXES } from '../../core/keys';
import { isSilent, seenBy, suspectWaitMs, type BeatRef, type Beats, type Confirmation, type Sight } from '../../core/fleet/liveness';
import { beatSchema, heartbeatSchema, type Heartbeat, type Leader } from '../../core/schemas';
import { decide, withAdmission, type WatchdogAction } from '../../core/fleet/watchdog';
import { emfDocuments } from '../../core/metrics/emf';
import { watchdogMetricValues } from '../../core/metrics/watchdog-metrics';
import { stateDamageEvent, withLeaderRepair } from '../../core/fleet/repair';
import { readsFailureQueues, withDeadLetters, withRise } from '../../core/fleet/dead-letters';
import { withIntakeWait } from '../../core/fleet/intake-wait';
import type { QueueDepths } from '../../aws/intake';
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
export const readHeartbeats = async ({ store, config, log }: WatchdogDeps, rejected: string[]): Promise<Map<string, Heartbeat>> => {
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

const quarantine = (deps: WatchdogDeps, found: (error: CorruptObjectError) => void) => async (error: CorruptObjectError): Promise<void> => {
  await deps.store.quarantine(KEYS.watchdogState, error.message, deps.now());
  deps.log.error({ err: error.message }, 'watchdog state corrupt: copied aside and rebuilt from the next samples');
  found(error);
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

/** Asks Lightsail and SSM about nodes that went silent; nobody else costs a request. */
const confirmSilent = async (deps: WatchdogDeps, state: WatchdogState, heartbeats: ReadonlyMap<string, Heartbeat>, leader: Leader | null, sight: Pick<Sight, 'beats' | 'earlier'>, now: number): Promise<Map<string, Confirmation>> => {
  const sampleMs = deps.config.sampleIntervalSeconds * 1000;
  const silent = deps.config.nodes.filter((spec) => {
    const watch = state.nodes[spec.name];
    return watch !== undefined && isSilent(seenBy(watch, heartbeats.get(spec.name), now, spec.name, leader, sight), now, sampleMs);
  });
  const found = await Promise.all(silent.map(async (spec) => [spec.name, await deps.probe.confirm(spec)] as const));
  return new Map(found);
};

/** The leader record, every heartbeat and beat, and when this look started if its reads needed retries. */
const look = async (deps: WatchdogDeps, rejected: string[]) => {
  const from = deps.now();
  const troubledBefore = deps.store.counts.troubledReads;
  const [record, heartbeats, beats] = await Promise.all([readLeaderRecord(deps), readHeartbeats(deps, rejected), readBeats(deps)]).catch((error: unknown) => {
    deps.sight.failing = true;
    throw error;
  });
  return { ...record, heartbeats, beats, troubledSince: deps.store.counts.troubledReads > troubledBefore ? from : null };
};

/** The incident an action is a step of, if any. */
const incidentOf = (action: WatchdogAction): string | undefined => ('incidentId' in action ? action.incidentId : action.kind === 'publish' ? action.event.incidentId : undefined);

/**
 * One watchdog invocation: gather heartbeats and the leader record, let the core decide,
 * store the verdict by CAS (a concurrent invocation that loses re-reads and finds the samples
 * already judged), then carry out the actions the winning write claimed.
 */
export const runWatchdog = async (deps: WatchdogDeps, options: { admit?: boolean } = {}): Promise<WatchdogRun> => {
  const rejected: string[] = [];
  // A run that cannot read what it judges fails as a whole (Lambda retries it); the next run
  // that gets through then judges no silence it could not see. A look whose reads got through
  // only after retries does not count its own time toward any node's silence. Each attempt looks
  // after it has read the state it judges (below), never before: a look older than the state
  // would apply a leader record another run had already seen replaced (a soak drill: a run that
  // looked before a failover judged the old primary silent as primary, on top of a state that
  // had it as a lost standby, and its agent was restarted twice for one fault).
  let seen: Awaited<ReturnType<typeof look>> | undefined;
  let now = deps.now();
  let waited = false;
  /** The leader record read before the wait, and when: its word stays true for a retried attempt too. */
  let earlier: Sight['earlier'];
  let confirmations = new Map<string, Confirmation>();
  // Admission (backpressure) on the schedule and the nodes' own triggers, not on every heartbeat's notification.
  const intake = options.admit === false ? null : deps.intake;
  let depths: QueueDepths | null = null;
  let damaged: CorruptObjectError | null = null;
  let rebuilt: WatchdogState | null = null;
  // The state the stored verdict started from and the one it stored (the last attempt's): the metrics'.
  let judgedStates: { before: WatchdogState; after: WatchdogState } | null = null;
  const judged = deps.store.update(
    KEYS.watchdogState,
    watchdogStateSchema,
    (current) => {
      const state = current ?? rebuilt ?? seededState([]);
      const settings = { ...deps.config, routed: deps.dns !== null };
      if (seen === undefined) throw new Error('the watchdog judged before it looked');
      const { leader, damage, heartbeats, beats, troubledSince } = seen;
      const judged = decide(state, leader, heartbeats, now, settings, confirmations, { failing: deps.sight.failing, troubledSince, beats, ...(earlier === undefined ? {} : { earlier }) });
      const admitted = deps.intake === null ? judged : withAdmission(judged, depths, leader, heartbeats, now, settings);
      // What the queues only failures reach, and input waiting too long, say (no alarm of their own).
      const risen = withRise('notifierFailures', withDeadLetters(admitted, depths?.deadLetters, leader, now), depths?.notifierFailures, leader, now);
      const watched = withIntakeWait(risen, depths?.intake, leader, now, deps.config.intakeWaitAlertSeconds * 1000);
      const verdict = withLeaderRepair(watched, damage, heartbeats, now, settings);
      judgedStates = { before: state, after: verdict.state };
      return { value: verdict.changed ? verdict.state : null, result: verdict.actions };
    },
    quarantine(deps, (error) => (damaged = error)),
    async (current) => {
      // No state stored (the first run) or a damaged one: start from the events' incident numbers.
      if (current === null) rebuilt ??= await seed(deps);
      const state = current ?? rebuilt ?? seededState([]);
      // Rejected heartbeats are reported once, from the first look.
      seen = await look(deps, seen === undefined ? rejected : []);
      now = deps.now();
      // A node one heartbeat late: wait (once, at most an interval, or an interval and a renewal
      // period for a node the primary reports quiet) until its silence is conclusive rather than
      // until the next trigger, then look again.
      const wait = waited ? null : suspectWaitMs(state.nodes, seen.heartbeats, now, deps.config.sampleIntervalSeconds * 1000, seen.leader, deps.config.leaseRenewSeconds * 1000, seen.beats);
      if (wait !== null) {
        waited = true;
        await deps.sleep(wait);
        // What the record said of the nodes' quiet held before the wait: the wait counts on top of it.
        earlier = { leader: seen.leader, at: now };
        seen = await look(deps, []);
        now = deps.now();
      }
      // Confirmations are I/O, so they are gathered before the pure decision.
      confirmations = await confirmSilent(deps, state, seen.heartbeats, seen.leader, { beats: seen.beats, ...(earlier === undefined ? {} : { earlier }) }, now);
      // Queue depths that cannot be read leave admission as it is this run (nothing admitted).
      const failureQueues = readsFailureQueues(now, deps.config.watchdogScheduleSeconds * 1000);
      depths = intake === null ? null : await intake.depths({ failureQueues }).catch((error: unknown) => {
        deps.log.warn({ err: describeError(error) }, 'queue depths unreadable: nothing admitted this run');
        return null;
      });
    },
  );
  let actions: WatchdogAction[];
  try {
    ({ result: actions } = await judged);
  } catch (error) {
    deps.sight.failing = true;
    throw error;
  }
  deps.sight.failing = false;
  const found = damaged as CorruptObjectError | null;
  if (found !== null) actions = [{ kind: 'publish', event: stateDamageEvent(found.etag, found.message, seen?.leader?.primary ?? null, deps.now()) }, ...actions];
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
        deps.log.error({ err: describeError(error), action: action.kind }, 'watchdog action failed; the next invocation retries what is still due');
        if (!(error instanceof FleetError)) throw error;
      }
    });
  }
  const states = judgedStates as { before: WatchdogState; after: WatchdogState } | null;
  if (deps.config.metrics !== 'off' && states !== null && seen !== undefined) {
    const values = watchdogMetricValues({ ...states, leader: seen.leader, heartbeats: seen.heartbeats, beats: seen.beats, now, nodes: deps.config.nodes, sampleMs: deps.config.sampleIntervalSeconds * 1000, done: carried, gauges: options.admit !== false });
    for (const doc of emfDocuments(deps.config.metrics, deps.config.bucket, deps.now(), values)) deps.metrics(JSON.stringify(doc));
  }
  return { nodes: deps.config.nodes.length, heartbeats: seen?.heartbeats.size ?? 0, rejected, actions: done };
};
