import { CorruptObjectError, describeError } from '../../core/errors';
import { KEYS } from '../../core/keys';
import { leaderSchema, type Leader } from '../../core/schemas';
import type { WatchdogDeps } from './deps';

/**
 * Reads the primary's record. A missing or corrupt one means "no primary to judge"; one that
 * cannot be read at all (S3 down, throttled past every retry) throws: a run that cannot see
 * the role must not judge the fleet as if nobody held it.
 */
export const readLeader = async ({ store, log }: WatchdogDeps): Promise<Leader | null> => {
  try {
    return (await store.read(KEYS.leader, leaderSchema))?.value ?? null;
  } catch (error) {
    if (!(error instanceof CorruptObjectError)) throw error;
    log.error({ err: describeError(error) }, 'leader record corrupt; judging no primary this round');
    return null;
  }
};
