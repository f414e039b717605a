import { z } from 'zod';
import type { Leader } from '../schemas';
import { emptyCounter } from './stall';
import type { Decision } from './watchdog';
import { makeEvent } from './watchdog-events';

/**
 * Every dead letter is alerted. A worker alerts the tasks it moves there itself (POISON_TASK,
 * with the reason); SQS's redrive, the backstop for what no worker can count (a task that kills
 * its worker), tells nobody. So the watchdog compares the dead-letter queue's depth, read with
 * admission's, with the depth it saw last, and alerts each rise (DEAD_LETTERED). A fall (an
 * operator redrove or purged it) is only noted. Pure.
 */
export const deadLettersSchema = z.object({
  /** The depth (visible and in flight) at the last read. */
  seen: z.number().int().min(0),
  /** DEAD_LETTERED alerts so far: part of each event id, so ids never repeat. */
  alerts: z.number().int().min(0),
});
export type DeadLetters = z.output<typeof deadLettersSchema>;

/** The round's dead-letter watch: an alert for a rise, the depth stored with the verdict. */
export const withDeadLetters = (verdict: Decision, depth: number | null | undefined, leader: Leader | null, now: number): Decision => {
  if (depth === null || depth === undefined) return verdict;
  const state = verdict.state;
  const before = state.deadLetters ?? { seen: 0, alerts: 0 };
  if (depth === before.seen) return verdict;
  const rose = depth > before.seen;
  const after: DeadLetters = { seen: depth, alerts: before.alerts + (rose ? 1 : 0) };
  const next = { state: { ...state, deadLetters: after, revision: verdict.changed ? state.revision : state.revision + 1 }, changed: true };
  if (!rose) return { ...verdict, ...next };
  const summary = `${depth - before.seen} new message(s) in the dead-letter queue (${depth} in all). A task a worker moved there was alerted as POISON_TASK with its reason; one SQS's redrive moved (a task that kept killing its worker) was not.`;
  const event = makeEvent('DEAD_LETTERED', leader?.primary ?? 'fleet', { id: `dead-letter-${after.alerts}`, epoch: leader?.epoch ?? 0 }, emptyCounter(), now, summary);
  return { ...verdict, ...next, actions: [...verdict.actions, { kind: 'publish', event }] };
};
