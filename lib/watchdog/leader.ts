import { describeError } from '../core/errors';
import { KEYS } from '../core/keys';
import { leaderSchema, type Leader } from '../core/schemas';
import type { WatchdogDeps } from './deps';

/** Reads the primary's record; a missing or corrupt one means "no primary to judge". */
export const readLeader = async ({ store, log }: WatchdogDeps): Promise<Leader | null> => {
  try {
    return (await store.read(KEYS.leader, leaderSchema))?.value ?? null;
  } catch (error) {
    log.error({ err: describeError(error) }, 'leader record unreadable; judging no primary this round');
    return null;
  }
};
