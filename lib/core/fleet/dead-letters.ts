import { z } from 'zod';
import type { EventKind } from '../events';
import type { Leader } from '../schemas';
import { emptyCounter } from './stall';
import type { Decision } from './watchdog';
import { makeEvent } from './watchdog-events';

/**
 * Queues where something arrives only when it went wrong, each watched by its depth on the
 * watchdog's admitting runs (read with admission's), instead of a CloudWatch alarm apiece ($0.10
 * a month each, docs/deploy.md, "Cost"). The watchdog compares the depth with the one it saw
 * last and alerts each rise; a fall (an operator redrove or purged it) is only noted. Pure.
 * - `deadLetters`: every dead letter is alerted. A worker alerts the tasks it moves there itself
 *   (POISON_TASK, with the reason); SQS's redrive, the backstop for what no worker can count (a
 *   task that kills its worker), tells nobody (DEAD_LETTERED).
 * - `notifierFailures`: an alert the Slack notifier could not post after its own retries and
 *   Lambda's two (NOTIFIER_FAILED). Its own alert goes to email only: the notifier's SNS
 *   subscription filters the kind out (serverless.yml), so a broken webhook cannot feed a loop.
 */
export const deadLettersSchema = z.object({
  /** The depth (visible and in flight) at the last read. */
  seen: z.number().int().min(0),
  /** Alerts so far: part of each event id, so ids never repeat. */
  alerts: z.number().int().min(0),
});
export type DeadLetters = z.output<typeof deadLettersSchema>;

export type RiseWatch = 'deadLetters' | 'notifierFailures';

interface RiseSpec {
  kind: EventKind;
  /** Event ids are `<prefix>-<n>` (seededState recovers n from them). */
  idPrefix: string;
  summary: (rise: number, depth: number) => string;
}

export const RISE_WATCHES: Readonly<Record<RiseWatch, RiseSpec>> = {
  deadLetters: {
    kind: 'DEAD_LETTERED',
    idPrefix: 'dead-letter',
    summary: (rise, depth) =>
      `${rise} new message(s) in the dead-letter queue (${depth} in all). A task a worker moved there was alerted ` +
      `as POISON_TASK with its reason; one SQS's redrive moved (a task that kept killing its worker) was not.`,
  },
  notifierFailures: {
    kind: 'NOTIFIER_FAILED',
    idPrefix: 'notifier-failure',
    summary: (rise, depth) =>
      `${rise} alert(s) Slack did not take after every retry (${depth} in the notifier's failure queue). Email had ` +
      `each of them; Slack missed them.`,
  },
};

/**
 * Whether a run at `now` reads these queues: in one schedule period of every five (a scheduled
 * run falls in each period, so one in five does; an agent's trigger in such a period does too).
 * Their alerts then come within five periods, as the alarms' 5-minute periods did, for two SQS
 * requests every five minutes instead of every minute ($0.03 a month less, docs/deploy.md, "Cost").
 */
const FAILURE_QUEUES_EVERY = 5;
export const readsFailureQueues = (now: number, scheduleMs: number): boolean =>
  Math.floor(now / scheduleMs) % FAILURE_QUEUES_EVERY === 0;

/** The round's watch of one such queue: an alert for a rise, the depth stored with the verdict. */
export const withRise = (
  which: RiseWatch,
  verdict: Decision,
  depth: number | null | undefined,
  leader: Leader | null,
  now: number,
): Decision => {
  if (depth === null || depth === undefined) return verdict;
  const state = verdict.state;
  const before = state[which] ?? { seen: 0, alerts: 0 };
  if (depth === before.seen) return verdict;
  const rose = depth > before.seen;
  const after: DeadLetters = { seen: depth, alerts: before.alerts + (rose ? 1 : 0) };
  const next = {
    state: { ...state, [which]: after, revision: verdict.changed ? state.revision : state.revision + 1 },
    changed: true,
  };
  if (!rose) return { ...verdict, ...next };
  const spec = RISE_WATCHES[which];
  const event = makeEvent(
    spec.kind,
    leader?.primary ?? 'fleet',
    { id: `${spec.idPrefix}-${after.alerts}`, epoch: leader?.epoch ?? 0 },
    emptyCounter(),
    now,
    spec.summary(depth - before.seen, depth),
  );
  return { ...verdict, ...next, actions: [...verdict.actions, { kind: 'publish', event }] };
};

/** The dead-letter queue's watch (DEAD_LETTERED). */
export const withDeadLetters = (
  verdict: Decision,
  depth: number | null | undefined,
  leader: Leader | null,
  now: number,
): Decision => withRise('deadLetters', verdict, depth, leader, now);
