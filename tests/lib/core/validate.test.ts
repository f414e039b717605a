import { z } from 'zod';
import { ValidationError } from '../../../lib/core/errors';
import { parseWith } from '../../../lib/core/validate';

const strict = z.strictObject({ a: z.number() });
const fieldOf = (input: unknown): string => {
  try {
    parseWith(strict, input, 'thing');
  } catch (error) {
    if (error instanceof ValidationError) return error.field;
    throw error;
  }
  return '(parsed)';
};

describe('parseWith', () => {
  it.each([
    ['an empty key', '', '""'],
    ['a blank key', ' ', '" "'],
    ['a key with a trailing newline', 'b\n', '"b\\n"'],
    ['a key with a control character', 'b\u0007c', '"b\\u0007c"'],
    ['an ordinary key', 'b', 'b'],
  ])('names %s so that the field never reads as nothing', (_case, key, field) => {
    expect(fieldOf({ a: 1, [key]: 2 })).toBe(field);
  });

  it('names the path of a nested failure', () => {
    expect(fieldOf({ a: 'x' })).toBe('a');
  });
});
