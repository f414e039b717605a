import { KEYS } from '../core/keys';
import { NotFoundError, ValidationError } from '../core/errors';
import { leaderSchema } from '../core/schemas';
import {
  applyChange,
  isPaused,
  noMaintenance,
  type Maintenance,
  type MaintenanceChange,
} from '../core/fleet/maintenance';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import type { OpsDeps } from './observe';

/** The JSON document of `fleet pause|resume|cordon|uncordon --json` (without `where`). */
export interface MaintenanceView {
  maintenance: Maintenance;
  /** Paused as stored: the watchdog lifts a pause past its end at its next run. */
  paused: boolean;
  /** True when this command changed what was stored. */
  changed: boolean;
}

/**
 * Applies an operator's maintenance change by CAS on the watchdog's state: its next run judges
 * by it, and a standby reads it before taking a lapsed lease. The primary cannot be cordoned:
 * it is the rotation; move the role first.
 */
export const changeMaintenance = async (
  deps: Pick<OpsDeps, 'config' | 'store' | 'now'>,
  change: MaintenanceChange,
): Promise<MaintenanceView> => {
  if ('node' in change && !deps.config.nodes.some((n) => n.name === change.node))
    throw new ValidationError(
      `NODE: ${change.node} is not a configured node (nodes: ${deps.config.nodes.map((n) => n.name).join(', ')})`,
      'NODE',
    );
  if (change.kind === 'cordon') {
    const leader = await deps.store.read(KEYS.leader, leaderSchema);
    if (leader?.value.primary === change.node)
      throw new ValidationError(
        `${change.node} is the primary: move the role first (fleet switchover --to OTHER), then cordon it`,
        'NODE',
      );
  }
  const { result } = await deps.store.update(KEYS.watchdogState, watchdogStateSchema, (current) => {
    if (current === null) return { value: null, result: null };
    const next = applyChange(current.maintenance, change);
    const changed = JSON.stringify(next) !== JSON.stringify(current.maintenance ?? noMaintenance());
    return {
      value: changed ? { ...current, revision: current.revision + 1, maintenance: next } : null,
      result: { maintenance: next, changed },
    };
  });
  if (result === null)
    throw new NotFoundError(
      'the watchdog has not run yet (no watchdog/state.json): deploy it, or wait for its first run, then try again',
    );
  return { ...result, paused: isPaused(result.maintenance) };
};
