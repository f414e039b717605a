import { setTimeout as delay } from 'node:timers/promises';
import { ValidationError } from '../../lib/core/errors';

/** Parses `--watch`'s interval: whole or fractional seconds, 1 to 3600. */
export const parseInterval = (raw: string): number => {
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600)
    throw new ValidationError(`--watch: must be 1 to 3600 seconds, not ${JSON.stringify(raw)}`, '--watch');
  return seconds;
};

/**
 * Shows `render()` every `everyMs` until the signal aborts, each round as one write: on a terminal
 * the screen is cleared first, elsewhere the rounds follow each other. A failed round is shown and
 * the next one tries again, so a watch outlives a brief outage.
 */
export const watch = async (
  render: () => Promise<string>,
  o: { everyMs: number; terminal: boolean; signal: AbortSignal; write: (text: string) => void },
): Promise<void> => {
  while (!o.signal.aborted) {
    const text = await render().catch((error: unknown) => `fleet: ${(error as Error).message ?? String(error)}`);
    o.write(`${o.terminal ? '\x1b[2J\x1b[H' : ''}${text}\n`);
    await delay(o.everyMs, undefined, { signal: o.signal }).catch(() => undefined);
  }
};
