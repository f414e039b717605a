import { CorruptObjectError, describeError, lostRace } from '../../core/errors';
import { KEYS } from '../../core/keys';
import type { LeaderDamage } from '../../core/fleet/repair';
import type { WatchdogAction } from '../../core/fleet/watchdog';
import { leaderSchema, type Leader } from '../../core/schemas';
import type { WatchdogDeps } from './deps';

/**
 * Reads the primary's record, and what damage it found instead of one. A missing or damaged
 * record means "no primary to judge" this round; one that cannot be read at all (S3 down,
 * throttled past every retry) throws: a run that cannot see the role must not judge the fleet
 * as if nobody held it.
 */
export const readLeaderRecord = async ({
  store,
  log,
}: WatchdogDeps): Promise<{ leader: Leader | null; damage: LeaderDamage | null }> => {
  try {
    return { leader: (await store.read(KEYS.leader, leaderSchema))?.value ?? null, damage: null };
  } catch (error) {
    if (!(error instanceof CorruptObjectError)) throw error;
    log.error({ err: describeError(error) }, 'leader record damaged; judging no primary this round, and rebuilding it');
    return { leader: null, damage: { etag: error.etag, detail: error.message } };
  }
};

/** The primary's record, or null when it is missing or damaged (see readLeaderRecord). */
export const readLeader = async (deps: WatchdogDeps): Promise<Leader | null> => (await readLeaderRecord(deps)).leader;

/**
 * Copies the damaged record aside and replaces exactly that version with the rebuilt one, when
 * one can be named. A
 * record changed meanwhile (another watchdog rebuilt it, a node wrote) is left alone.
 */
export const repairLeader = async (
  deps: WatchdogDeps,
  action: Extract<WatchdogAction, { kind: 'repair-leader' }>,
): Promise<void> => {
  const { store, log } = deps;
  // The copy is the evidence, needed only before it is overwritten: a run that can name nobody copies nothing.
  if (action.leader === null) return;
  await store.quarantine(KEYS.leader, 'damaged leader record, rebuilt by the watchdog', deps.now());
  try {
    await store.replace(KEYS.leader, action.leader, action.etag);
    log.warn({ primary: action.leader.primary, epoch: action.leader.epoch }, action.leader.reason);
  } catch (error) {
    if (!lostRace(error)) throw error;
    log.info({}, 'leader record changed since it was found damaged: not rebuilt by this run');
  }
};
