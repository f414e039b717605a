import { z } from 'zod';
import type { Leader } from '../schemas';
import { emptyCounter } from './stall';
import type { Decision } from './watchdog';
import { makeEvent } from './watchdog-events';

/**
 * Input that waits too long. Producers' tasks wait in the intake queue while input is held
 * (INPUT_HELD) or while the task queue is at the high mark; the watchdog notices, on its
 * admitting runs, when every read of the intake queue for `intakeWaitAlertSeconds` found
 * something waiting, and alerts once for that spell (INPUT_WAITING). A read that finds it empty
 * ends the spell. This replaces a CloudWatch alarm on the queue's oldest message ($0.10 a
 * month, docs/deploy.md, "Cost"): the oldest message's age cannot be read through the SQS API, and a
 * queue never empty for that long is at least as old a wait, so it alerts no later than the
 * alarm did, and earlier when the queue flows but never drains (the fleet lacks capacity).
 * Times are the watchdog's clock only. Pure.
 */
export const intakeWaitSchema = z.object({
  /** The first read of this spell that found input waiting (watchdog clock); null between spells. */
  since: z.number().nullable(),
  /** INPUT_WAITING alerts so far: part of each event id, so ids never repeat. */
  alerts: z.number().int().min(0),
  /** This spell was alerted. */
  alerted: z.boolean(),
});
export type IntakeWait = z.output<typeof intakeWaitSchema>;

export const INTAKE_WAIT_PREFIX = 'input-wait';

/** The round's intake watch: the spell's start, and its alert once it lasted `alertAfterMs`. */
export const withIntakeWait = (
  verdict: Decision,
  intake: number | null | undefined,
  leader: Leader | null,
  now: number,
  alertAfterMs: number,
): Decision => {
  if (intake === null || intake === undefined) return verdict;
  const state = verdict.state;
  const before = state.intakeWait ?? { since: null, alerts: 0, alerted: false };
  let after: IntakeWait;
  if (intake === 0) after = { ...before, since: null, alerted: false };
  else if (before.since === null) after = { ...before, since: now, alerted: false };
  else if (!before.alerted && now - before.since >= alertAfterMs)
    after = { ...before, alerts: before.alerts + 1, alerted: true };
  else return verdict;
  if (after.since === before.since && after.alerted === before.alerted) return verdict;
  const next = {
    state: { ...state, intakeWait: after, revision: verdict.changed ? state.revision : state.revision + 1 },
    changed: true,
  };
  if (after.alerts === before.alerts) return { ...verdict, ...next };
  const minutes = Math.round((now - (before.since ?? now)) / 60_000);
  const summary =
    `Input has waited in the intake queue for ${minutes} min: every read since found messages there ` +
    `(${intake} now). Held input (INPUT_HELD) or a task queue at its high mark keeps it there.`;
  const event = makeEvent(
    'INPUT_WAITING',
    leader?.primary ?? 'fleet',
    { id: `${INTAKE_WAIT_PREFIX}-${after.alerts}`, epoch: leader?.epoch ?? 0 },
    emptyCounter(),
    now,
    summary,
  );
  return { ...verdict, ...next, actions: [...verdict.actions, { kind: 'publish', event }] };
};
