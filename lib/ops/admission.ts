import { KEYS } from '../core/keys';
import { emptyAdmission, withMode, type Admission, type AdmissionMode } from '../core/fleet/admission';
import { watchdogStateSchema } from '../core/fleet/watchdog-state';
import { describeError } from '../core/errors';
import type { OpsDeps } from './observe';

/** The JSON document of `fleet admission --json` (without `where`). */
export interface AdmissionView extends Admission {
  /** True when this command changed the mode. */
  changed: boolean;
  /** The queues' depths now, or why they could not be read; null without an intake queue configured. */
  depths: { backlog: number; intake: number } | { error: string } | null;
}

/**
 * Shows whether input is held, and with `mode` sets the operator's override by CAS on the
 * watchdog's state: the watchdog's next run applies it, whatever triggered that run; messages
 * move again with the next run that reads the queues (its schedule, or an agent's trigger).
 */
export const admission = async (deps: OpsDeps, mode: AdmissionMode | null): Promise<AdmissionView> => {
  const { result } = await deps.store.update(KEYS.watchdogState, watchdogStateSchema, (current) => {
    const now = current?.admission ?? emptyAdmission();
    const next = mode === null || current === null ? null : withMode(current.admission, mode);
    return {
      value: next === null || current === null ? null : { ...current, revision: current.revision + 1, admission: next },
      result: { ...(next ?? now), changed: next !== null },
    };
  });
  if (mode !== null && result.mode !== mode)
    throw new Error(
      'the watchdog has not run yet (no watchdog/state.json): deploy it, or wait for its first run, then try again',
    );
  const depths =
    deps.intake === null
      ? null
      : await deps.intake.depths().catch((error: unknown) => ({ error: describeError(error) }));
  return { ...result, depths };
};
