import { decide, type Inputs, type Settings } from '../../lib/core/fleet/watchdog';
import type { Confirmation } from '../../lib/core/fleet/liveness';
import type { WatchdogState } from '../../lib/core/fleet/watchdog-state';
import type { Heartbeat, Leader } from '../../lib/core/schemas';

/** `decide` with the common inputs positional, as most ladder tests read. */
export const judge = (
  state: WatchdogState,
  leader: Leader | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: Settings,
  confirmations: ReadonlyMap<string, Confirmation> = new Map(),
  more: Partial<Inputs> = {},
): ReturnType<typeof decide> => decide(state, { now, leader, heartbeats, confirmations, ...more }, settings);

/** `judge` with a primary that renews its lease: its renewal count follows the clock, so the lease never goes stale. */
export const judgeAlive = (
  state: WatchdogState,
  leader: Leader | null,
  heartbeats: ReadonlyMap<string, Heartbeat>,
  now: number,
  settings: Settings,
  confirmations: ReadonlyMap<string, Confirmation> = new Map(),
  more: Partial<Inputs> = {},
): ReturnType<typeof decide> => {
  const renewing = leader === null ? null : { ...leader, renewals: Math.floor(now / 1000) };
  return judge(state, renewing, heartbeats, now, settings, confirmations, more);
};
