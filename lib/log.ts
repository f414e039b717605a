import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Fields every log line carries while a piece of work runs (its awaits included). */
const scope = new AsyncLocalStorage<Readonly<Record<string, string>>>();

/**
 * Runs `fn` with `fields` on every line any logger of createLogger writes meanwhile, through
 * every await: a function's request id for a whole invocation, an incident's id for the steps
 * taken for it. Nested calls add to the fields around them; undefined ones are left out.
 */
export const withLogFields = <T>(fields: Readonly<Record<string, string | undefined>>, fn: () => T): T => {
  const defined = Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined));
  return scope.run({ ...scope.getStore(), ...defined }, fn);
};

let testDestination: DestinationStream | null = null;

/** Test hook: loggers created from now on write to `stream` instead of stderr (null: stderr again). */
export const logToForTests = (stream: DestinationStream | null): void => {
  testDestination = stream;
};

/**
 * One structured logger for the whole project. JSON lines on stderr (Lambda and journald
 * both keep them); `FLEET_LOG_LEVEL`-free: the level comes from LOG_LEVEL, default info.
 */
export const createLogger = (
  name: string,
  bindings: Record<string, unknown> = {},
  level = process.env.LOG_LEVEL ?? 'info',
  destination: DestinationStream = testDestination ?? pino.destination(2),
): Logger =>
  pino(
    { name, level, base: bindings, redact: ['webhookUrl', '*.webhookUrl'], mixin: () => ({ ...scope.getStore() }) },
    destination,
  );

export type { Logger };
