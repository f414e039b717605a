import pino, { type Logger } from 'pino';

/**
 * One structured logger for the whole project. JSON lines on stderr (Lambda and journald
 * both keep them); `FLEET_LOG_LEVEL`-free: the level comes from LOG_LEVEL, default info.
 */
export const createLogger = (name: string, bindings: Record<string, unknown> = {}, level = process.env.LOG_LEVEL ?? 'info'): Logger =>
  pino({ name, level, base: bindings, redact: ['webhookUrl', '*.webhookUrl'] }, pino.destination(2));

export type { Logger };
