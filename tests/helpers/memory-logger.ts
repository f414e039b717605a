import pino from 'pino';
import type { Logger } from '../../lib/log';

/** A pino logger at the most verbose level that keeps every line it writes in memory. */
export const memoryLogger = (): { log: Logger; lines: string[]; text: () => string } => {
  const lines: string[] = [];
  // No redaction on purpose: a test over this proves nothing secret is ever handed to the logger.
  const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { log, lines, text: () => lines.join('') };
};
