import fc from 'fast-check';
import { CorruptObjectError, ValidationError } from '../../lib/core/errors';
import { pathStep } from '../../lib/core/validate';

/**
 * Hostile inputs for the parsers at the edge: wrong types, huge strings, deep
 * nesting, keys that reach the prototype, text that was never UTF-8, Slack markup. Shared by the
 * `*.property.test.ts` files, with the checks every case ends with: no pollution, and either a
 * clean parse or a typed error that names the field.
 */

/** How many cases each hostile property tries: enough to reach every branch, few enough to stay fast. */
export const RUNS = 200;

/** Keys that reach, or shadow, what every plain object inherits. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
] as const;

/** Slack control sequences: broadcasts, mentions, forged links, and text that only looks escaped. */
export const SLACK_MARKUP = [
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<@U012AB3CD>',
  '<#C0123ABC>',
  '<!subteam^S012|team>',
  '<http://evil.example|click here>',
  '<mailto:a@b.example|mail>',
  '@channel',
  '@here',
  '@everyone',
  '&lt;!here&gt;',
  '&amp',
  '*bold*',
  '```',
  '\u202e',
] as const;

/**
 * Text decoded from bytes that are not UTF-8 (Node yields
 * U+FFFD), and lone surrogates (what `"\ud800"` in JSON yields).
 */
export const brokenTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 48 }).map((b) => Buffer.from(b).toString('utf8')),
  fc.constant(Buffer.from([0xff, 0xfe, 0x7b, 0x22]).toString('utf8')),
  fc.constant(Buffer.from([0xff, 0xfe, 0x7b, 0x22]).toString('latin1')),
  fc
    .tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 8 }))
    .map(([a, s, b]) => `${a}${String.fromCharCode(s)}${b}`),
);

/** Long text of markup, astral characters and entities, so a cut at any limit lands inside one of them. */
export const markupRunArb: fc.Arbitrary<string> = fc
  .array(fc.constantFrom<string>(...SLACK_MARKUP, ...PROTOTYPE_KEYS, ' ', 'x', '😀', '&', '<', '>', '\ud800'), {
    maxLength: 700,
  })
  .map((parts) => parts.join(''));

/**
 * Strings far past every field limit and the store's size limit in tests (up to 60 000 characters, to keep runs fast).
 */
export const hugeStringArb: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('x', '😀', '&<', '9', ' '), fc.integer({ min: 1_001, max: 60_000 }))
  .map(([unit, n]) => unit.repeat(Math.ceil(n / unit.length)));

/** Any string a hostile writer could put in a field. */
export const hostileStringArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 1 },
  { arbitrary: brokenTextArb, weight: 2 },
  { arbitrary: fc.constantFrom<string>(...PROTOTYPE_KEYS, ...SLACK_MARKUP), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'NaN',
      '1e999',
      '-0',
      '0x1f',
      '%',
      '%E0%A4%A',
      '%ff',
      '\u0000',
      'node-1',
      'task-0001',
    ),
    weight: 2,
  },
  { arbitrary: markupRunArb, weight: 1 },
  { arbitrary: hugeStringArb, weight: 1 },
);

/** Numbers no field should take as they come: non-finite, negative zero, beyond safe integers and the Date range. */
export const hostileNumberArb: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    0.5,
    -1,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    2 ** 53,
    2 ** 53 + 2,
    1e300,
    -1e300,
    8.64e15 + 1,
  ),
);

/** Object keys: the prototype's own names, and anything else. */
export const hostileKeyArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom<string>(...PROTOTYPE_KEYS),
  fc.string({ maxLength: 12 }),
  brokenTextArb,
);

/**
 * Objects are built as JSON.parse builds them (own data properties, `__proto__` included), so a
 * value here reaches a parser exactly as a body read from S3 or a Lambda event would.
 */
const objectOf = (entries: [string, unknown][]): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
};

/** Any JSON-like value of bounded depth, hostile at every level. */
export const hostileValueArb: fc.Arbitrary<unknown> = fc.letrec<{
  value: unknown;
  array: unknown[];
  object: Record<string, unknown>;
}>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    hostileStringArb,
    hostileNumberArb,
    fc.boolean(),
    fc.constant(null),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(hostileKeyArb, tie('value')), { maxLength: 4 }).map(objectOf),
})).value;

/** The classic pollution payloads, as parsed JSON. */
export const POLLUTERS: readonly unknown[] = [
  JSON.parse('{"__proto__":{"polluted":true}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  JSON.parse('{"__proto__":{"__proto__":{"polluted":true}},"prototype":{"polluted":true}}'),
];

/**
 * Deep nesting as text: `[[[…]]]` or `{"a":{"a":…}}`, `depth` levels (JSON.parse takes it; recursive code
 * would not).
 */
export const deepJsonText = (depth: number, kind: 'array' | 'object'): string =>
  kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A nesting depth and shape; the value is built inside the property, so a counterexample prints small. */
export const deepArb = fc.record({
  depth: fc.integer({ min: 1_000, max: 20_000 }),
  kind: fc.constantFrom('array' as const, 'object' as const),
});

/** JSON text of any hostile value; `__proto__` keys survive as JSON.stringify writes own properties. */
export const hostileJsonTextArb: fc.Arbitrary<string> = fc.oneof(
  hostileValueArb.map((v) => JSON.stringify(v) ?? 'null'),
  fc.constantFrom(...POLLUTERS.map((p) => JSON.stringify(p))),
  deepArb.map(({ depth, kind }) => deepJsonText(depth, kind)),
  brokenTextArb,
  fc.string({ maxLength: 60 }),
);

type Path = (string | number)[];

/**
 * A path as ValidationError.field spells it: dotted, each step
 * as the parser names it (a key that reads as nothing, quoted).
 */
const dotted = (path: Path): string => path.map(pathStep).join('.');

/** Every position in a JSON value, root first. */
const pathsOf = (value: unknown, at: Path = []): Path[] => {
  if (typeof value !== 'object' || value === null) return [at];
  const children = Array.isArray(value)
    ? value.map((v, i) => pathsOf(v, [...at, i]))
    : Object.entries(value).map(([k, v]) => pathsOf(v, [...at, k]));
  return [at, ...children.flat()];
};

/** One hostile change to a valid record, and the dotted path of what it changed. */
export interface Mutation {
  value: unknown;
  path: string;
  how: 'replace' | 'remove' | 'add';
}

/**
 * A valid record changed in one place: a value replaced by a hostile one, a key removed, or a
 * hostile key added (pollution payloads included). Reaches the checks deep inside a schema that
 * an arbitrary value never gets past the first field for.
 */
export const mutationArb = (valid: unknown): fc.Arbitrary<Mutation> => {
  const paths = pathsOf(valid);
  const change = fc.record({
    at: fc.constantFrom(...paths),
    how: fc.constantFrom('replace' as const, 'remove' as const, 'add' as const),
    key: hostileKeyArb,
    with: fc.oneof(hostileValueArb, fc.constantFrom(...POLLUTERS)),
  });
  return change.map(({ at, how, key, with: replacement }) => {
    const copy = JSON.parse(JSON.stringify(valid)) as unknown;
    const last = at[at.length - 1];
    if (last === undefined) return { value: how === 'replace' ? replacement : copy, path: '', how };
    let parent = copy as Record<string | number, unknown>;
    for (const step of at.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
    const target = parent[last];
    if (how === 'add' && typeof target === 'object' && target !== null && !Array.isArray(target)) {
      Object.defineProperty(target, key, { value: replacement, enumerable: true, writable: true, configurable: true });
      return { value: copy, path: dotted([...at, key]), how };
    }
    if (how === 'remove' && !Array.isArray(parent)) delete parent[last];
    else parent[last] = replacement;
    return { value: copy, path: dotted(at), how: how === 'remove' && !Array.isArray(parent) ? 'remove' : 'replace' };
  });
};

/**
 * True when `field` points at the change made at `path`: the path itself, or something inside
 * the value put there. (A change of the whole record may be named by any of its fields.)
 */
export const pointsAt = (field: string, path: string): boolean =>
  path === '' ? field.length > 0 : field === path || field.startsWith(`${path}.`);

/** What a parser did with a hostile input: a clean parse, or a typed error. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ValidationError };

/** Error classes a parser at the edge may throw. */
const TYPED = [ValidationError, CorruptObjectError] as const;

const classify = (error: unknown): ValidationError => {
  if (TYPED.some((t) => error instanceof t)) return error as ValidationError;
  // Anything else (TypeError, RangeError, a stack overflow) is the defect the properties look for.
  const e = error as Error;
  throw new Error(`untyped ${e?.name ?? typeof error}: ${String(e?.message ?? error).slice(0, 300)}`);
};

/** Runs a parser; a clean parse or a ValidationError (named field) comes back, anything else fails the case. */
export const outcomeOf = <T>(parse: () => T): Outcome<T> => {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    const typed = classify(error);
    expect(typed.field).toMatch(/\S/);
    return { ok: false, error: typed };
  }
};

/** `outcomeOf` for an async parser or handler. */
export const outcomeOfAsync = async <T>(parse: () => Promise<T>): Promise<Outcome<T>> => {
  try {
    return { ok: true, value: await parse() };
  } catch (error) {
    const typed = classify(error);
    expect(typed.field).toMatch(/\S/);
    return { ok: false, error: typed };
  }
};

/** Each own property of a prototype with what it holds, to tell any change (added, replaced, removed). */
const describePrototype = (proto: object): [string, unknown, unknown, unknown][] =>
  Object.getOwnPropertyNames(proto)
    .sort()
    .map((name) => {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      return [name, d?.value, d?.get, d?.set];
    });

const OBJECT_PROTOTYPE = describePrototype(Object.prototype);
const ARRAY_PROTOTYPE = describePrototype(Array.prototype);

const unchanged = (
  now: [string, unknown, unknown, unknown][],
  before: [string, unknown, unknown, unknown][],
): boolean => now.length === before.length && now.every((p, i) => p.every((v, j) => v === before[i]?.[j]));

/** Fails unless Object.prototype and Array.prototype are exactly as they were when this module loaded. */
export const expectNoPollution = (): void => {
  // Compared by hand, and through expect only when something differs: it runs after every case.
  const clean =
    ({} as Record<string, unknown>).polluted === undefined &&
    ([] as unknown as Record<string, unknown>).polluted === undefined &&
    unchanged(describePrototype(Object.prototype), OBJECT_PROTOTYPE) &&
    unchanged(describePrototype(Array.prototype), ARRAY_PROTOTYPE);
  if (!clean) {
    expect(describePrototype(Object.prototype)).toEqual(OBJECT_PROTOTYPE);
    expect(describePrototype(Array.prototype)).toEqual(ARRAY_PROTOTYPE);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }
};
