import type { z } from 'zod';
import { ValidationError } from './errors';

/** One step of a path; a key that would read as nothing (empty, padded, control characters) is quoted as JSON. */
export const pathStep = (key: PropertyKey): string =>
  typeof key === 'string' && (key === '' || /^\s|\s$|[\u0000-\u001f]/.test(key)) ? JSON.stringify(key) : String(key);

/** Dotted path of a zod issue (`nodes.1.name`), or `(root)`. */
const pathOf = (issue: z.core.$ZodIssue): string =>
  issue.path.length === 0 ? '(root)' : issue.path.map(pathStep).join('.');

/**
 * Parses `input` with `schema`, or throws a ValidationError whose message names the first
 * offending field, prefixed by `what` (for example `scenario file` or `heartbeat of node-2`).
 */
export const parseWith = <T extends z.ZodType>(schema: T, input: unknown, what: string): z.output<T> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new ValidationError(`${what}: invalid`, '(root)');
  let field = pathOf(issue);
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) {
    const prefix = issue.path.length > 0 ? `${field}.` : '';
    field = `${prefix}${issue.keys.map(pathStep).join(', ')}`;
    throw new ValidationError(`${what}: unknown key ${field}`, field);
  }
  throw new ValidationError(`${what}: ${field}: ${issue.message}`, field);
};

/** Parses a JSON text, turning a syntax error into a ValidationError. */
export const parseJsonText = (text: string, what: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ValidationError(`${what}: not valid JSON (${(error as Error).message})`, '(root)', { cause: error });
  }
};
