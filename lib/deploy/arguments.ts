/**
 * Argument shapes of intrinsic functions: the forms CloudFormation accepts for each call, so a
 * `Fn::Join` without its list fails here and not at deploy time. Only the shape is checked;
 * the names a call refers to are checked in references.ts.
 */
import {
  asIntrinsic,
  getAttTarget,
  mixedIntrinsicKey,
  resultShapes,
  subParts,
  type Intrinsic,
  type Shape,
} from './intrinsics';
import { isObject, type Problem } from './types';
import { article, describeValue } from './values';

/** Declared Type of a parameter, for `Ref` to a list parameter. */
export type ParameterType = (name: string) => string | undefined;

const USAGE: Readonly<Record<string, string>> = {
  Ref: 'Ref takes a name',
  'Fn::If': 'Fn::If takes [condition name, value if true, value if false]',
  'Fn::GetAtt': 'Fn::GetAtt takes [resource, attribute] or "resource.attribute"',
  'Fn::Sub': 'Fn::Sub takes a string or [string, variable map]',
  'Fn::FindInMap': 'Fn::FindInMap takes [map name, top-level key, second-level key]',
  'Fn::Join': 'Fn::Join takes [delimiter, list of values]',
  'Fn::Select': 'Fn::Select takes [index, list]',
  'Fn::Split': 'Fn::Split takes [delimiter, string]',
};

/** Every way the call `fn`, whose key sits at `at`, has the wrong arguments. */
export const argumentProblems = (fn: Intrinsic, at: string, parameterType: ParameterType): Problem[] => {
  const arg = fn.argument;
  const usage = [{ path: at, message: USAGE[fn.name] ?? '' }];
  const pair = Array.isArray(arg) && arg.length === 2 ? (arg as readonly unknown[]) : undefined;
  switch (fn.name) {
    case 'Ref':
      return typeof arg === 'string' ? [] : usage;
    case 'Fn::If':
      return Array.isArray(arg) && arg.length === 3 && typeof arg[0] === 'string' ? [] : usage;
    case 'Fn::Sub':
      return subParts(arg) === undefined ? usage : [];
    case 'Fn::FindInMap':
      return Array.isArray(arg) && arg.length >= 3 && arg.length <= 4 ? [] : usage;
    case 'Fn::GetAtt': {
      const target = getAttTarget(arg);
      if (target === undefined) return usage;
      // The attribute name may come from a Ref, and from nothing else.
      const attribute = target.attribute;
      const fromRef = asIntrinsic(attribute)?.name === 'Ref';
      return typeof attribute === 'string' || fromRef
        ? []
        : [{ path: `${at}.1`, message: 'the Fn::GetAtt attribute must be a name or a Ref' }];
    }
    case 'Fn::Join':
      if (pair === undefined) return usage;
      return [
        ...literalDelimiter(pair[0], `${at}.0`, fn.name),
        ...expectShape(pair[1], 'list', `${at}.1`, 'Fn::Join needs a list of values', parameterType),
        ...(Array.isArray(pair[1])
          ? pair[1].flatMap((element: unknown, i) =>
              expectShape(element, 'scalar', `${at}.1.${i}`, 'Fn::Join joins strings', parameterType),
            )
          : []),
      ];
    case 'Fn::Select':
      if (pair === undefined) return usage;
      return [
        ...selectIndex(pair[0], pair[1], at, parameterType),
        ...expectShape(pair[1], 'list', `${at}.1`, 'Fn::Select needs a list', parameterType),
      ];
    case 'Fn::Split':
      if (pair === undefined) return usage;
      return [
        ...literalDelimiter(pair[0], `${at}.0`, fn.name),
        ...expectShape(pair[1], 'scalar', `${at}.1`, 'Fn::Split splits a string', parameterType),
      ];
    default:
      return [];
  }
};

/** CloudFormation resolves no function in a delimiter. */
const literalDelimiter = (value: unknown, path: string, name: string): Problem[] =>
  typeof value === 'string'
    ? []
    : [{ path, message: `the ${name} delimiter must be a literal string, got ${describeValue(value)}` }];

/** The index is a literal (checked against a literal list) or a call yielding one value. */
const selectIndex = (index: unknown, list: unknown, at: string, parameterType: ParameterType): Problem[] => {
  if (asIntrinsic(index) !== undefined)
    return expectShape(index, 'scalar', `${at}.0`, 'the Fn::Select index must be one value', parameterType);
  const n = typeof index === 'number' ? index : typeof index === 'string' && /^\d+$/.test(index) ? Number(index) : NaN;
  if (!Number.isInteger(n) || n < 0) {
    return [
      { path: `${at}.0`, message: `the Fn::Select index must be a non-negative integer, got ${describeValue(index)}` },
    ];
  }
  if (Array.isArray(list) && n >= list.length) {
    return [{ path: `${at}.0`, message: `Fn::Select index ${n} is out of range for a list of ${list.length}` }];
  }
  return [];
};

/**
 * Whether `value` can have `shape`: a literal by what it is, a call by what it yields. Calls
 * whose result the checker cannot tell (`Fn::If`, unknown ones) and mixed-key objects,
 * reported on their own, pass.
 */
const expectShape = (
  value: unknown,
  shape: Shape,
  path: string,
  what: string,
  parameterType: ParameterType,
): Problem[] => {
  const fn = asIntrinsic(value);
  if (fn !== undefined) {
    const produced = resultShapes(fn, parameterType);
    if (produced === undefined || produced.includes(shape)) return [];
    return [{ path, message: `${what}, got ${fn.name}, which yields ${produced.map(article).join(' or ')}` }];
  }
  if (mixedIntrinsicKey(value) !== undefined) return [];
  const actual: Shape = Array.isArray(value) ? 'list' : isObject(value) ? 'object' : 'scalar';
  return actual === shape ? [] : [{ path, message: `${what}, got ${describeValue(value)}` }];
};
