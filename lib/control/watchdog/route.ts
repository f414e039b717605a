import { emptyCounter } from '../../core/fleet/stall';
import { markRouted } from '../../core/fleet/outcomes';
import type { WatchdogAction } from '../../core/fleet/watchdog';
import { makeEvent } from '../../core/fleet/watchdog-events';
import { emit, record } from './actions';
import type { WatchdogDeps } from './deps';
import { readLeader } from './leader';

type RouteAction = Extract<WatchdogAction, { kind: 'route' }>;

/**
 * Traffic follows the lease: points the origin record at the primary leader.json names, however
 * it got the role (a standby that promoted itself, a person, the watchdog's own failover), and
 * announces a move once per epoch (RECORD_CHANGED of incident `route-e<epoch>`). It does not
 * wait for INSYNC: the record is what it must be, Route 53 propagates it within its minute.
 */
export const route = async (deps: WatchdogDeps, decided: RouteAction): Promise<void> => {
  // The role may have moved since this run read it (its own failover, a standby): follow what
  // leader.json says now, never what it said then.
  const leader = await readLeader(deps);
  if (leader === null) return;
  const a = { primary: leader.primary, epoch: leader.epoch };
  if (a.epoch < decided.epoch) return;
  const spec = deps.config.nodes.find((n) => n.name === a.primary);
  if (deps.dns === null || spec?.address === undefined) {
    deps.log.warn({ primary: a.primary }, 'the primary has no configured address: the origin record cannot follow it');
    return;
  }
  const moved = await deps.dns.pointTo(spec.address, { timeoutMs: 0, pollMs: 0, sleep: deps.sleep });
  if (moved.changed) {
    const summary =
      `origin record → ${spec.address} (${spec.name}, primary of epoch ${a.epoch}): traffic follows ` + `the lease.`;
    await emit(
      deps,
      makeEvent(
        'RECORD_CHANGED',
        spec.name,
        { id: `route-e${a.epoch}`, epoch: a.epoch },
        emptyCounter(),
        deps.now(),
        summary,
        { newPrimary: spec.name, newEpoch: a.epoch },
      ),
    );
  }
  await record(deps, (s) => markRouted(s, a.primary, a.epoch));
};
