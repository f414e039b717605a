/**
 * Recognising CloudFormation intrinsic functions and what they can evaluate to.
 */
import { isObject } from './types';

/** Pseudo parameters: `Ref` targets that exist in every stack. */
export const PSEUDO_PARAMETERS: ReadonlySet<string> = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

/** Functions that only make sense inside the Conditions section. */
export const CONDITION_FUNCTIONS: ReadonlySet<string> = new Set(['Fn::And', 'Fn::Equals', 'Fn::Not', 'Fn::Or']);

/** The coarse shape of a value: enough to tell a function result from the wrong kind of slot. */
export type Shape = 'scalar' | 'list' | 'object';

/** Result shapes of functions whose result does not depend on their arguments. */
const RESULT_SHAPES: Readonly<Record<string, readonly Shape[]>> = {
  'Fn::Base64': ['scalar'],
  'Fn::Join': ['scalar'],
  'Fn::Sub': ['scalar'],
  'Fn::ImportValue': ['scalar'],
  'Fn::Select': ['scalar'],
  'Fn::Length': ['scalar'],
  'Fn::ToJsonString': ['scalar'],
  'Fn::Split': ['list'],
  'Fn::GetAZs': ['list'],
  'Fn::Cidr': ['list'],
  // Some attributes (VPC Ipv6CidrBlocks) and mapping values are lists.
  'Fn::GetAtt': ['scalar', 'list'],
  'Fn::FindInMap': ['scalar', 'list'],
  // A macro can return anything.
  'Fn::Transform': ['scalar', 'list', 'object'],
};

/** Every function name the checker understands, in values and in Conditions. */
export const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set([
  'Ref',
  'Fn::If',
  ...Object.keys(RESULT_SHAPES),
  ...CONDITION_FUNCTIONS,
]);

/** An intrinsic function call: `{ "Fn::Join": [...] }` is `{ name: 'Fn::Join', argument: [...] }`. */
export interface Intrinsic {
  readonly name: string;
  readonly argument: unknown;
}

/**
 * The function call `value` is, if it is one: an object whose single key is `Ref` or starts
 * with `Fn::`. With `conditionSection`, `{ Condition: name }` counts too; elsewhere a lone
 * `Condition` key is an ordinary property (IAM statements have one).
 */
export const asIntrinsic = (value: unknown, conditionSection = false): Intrinsic | undefined => {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const name = keys[0];
  const isFunction = name === 'Ref' || name.startsWith('Fn::') || (conditionSection && name === 'Condition');
  return isFunction ? { name, argument: value[name] } : undefined;
};

/** `{ "Ref": "AWS::NoValue" }`: removes the property it is the value of. */
export const isNoValue = (value: unknown): boolean => {
  const fn = asIntrinsic(value);
  return fn?.name === 'Ref' && fn.argument === 'AWS::NoValue';
};

/**
 * The function key of an object that mixes one with other keys (`{ "Ref": "A", "x": 1 }`),
 * which CloudFormation rejects; `undefined` for a call or a plain object.
 */
export const mixedIntrinsicKey = (value: unknown, conditionSection = false): string | undefined => {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length < 2) return undefined;
  return keys.find((key) => key === 'Ref' || key.startsWith('Fn::') || (conditionSection && key === 'Condition'));
};

/** Parameter types whose `Ref` is a list rather than a string. */
const LIST_PARAMETER = /^(List<|CommaDelimitedList|AWS::SSM::Parameter::Value<(List<|CommaDelimitedList))/;

/**
 * The shapes a call can produce, or `undefined` when the checker cannot tell (unknown and
 * condition functions, reported elsewhere; `Fn::If`, checked branch by branch).
 * `parameterType` gives the declared Type of a parameter, for `Ref` to a list parameter.
 */
export const resultShapes = (
  fn: Intrinsic,
  parameterType: (name: string) => string | undefined,
): readonly Shape[] | undefined => {
  if (fn.name === 'Ref') {
    if (typeof fn.argument !== 'string') return undefined;
    if (fn.argument === 'AWS::NotificationARNs') return ['list'];
    return LIST_PARAMETER.test(parameterType(fn.argument) ?? '') ? ['list'] : ['scalar'];
  }
  return RESULT_SHAPES[fn.name];
};

/** A `${Name}` or `${Name.Attribute}` placeholder in an `Fn::Sub` string. */
export interface SubPlaceholder {
  readonly name: string;
  readonly attribute?: string;
}

/** The placeholders of an `Fn::Sub` string; `${!Literal}` is an escaped literal and skipped. */
export const subPlaceholders = (text: string): SubPlaceholder[] => {
  const found: SubPlaceholder[] = [];
  for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
    const inner = (match[1] ?? '').trim();
    if (inner === '' || inner.startsWith('!')) continue;
    const dot = inner.indexOf('.');
    found.push(dot < 0 ? { name: inner } : { name: inner.slice(0, dot), attribute: inner.slice(dot + 1) });
  }
  return found;
};

/** The parts of an `Fn::Sub` argument, a string or `[string, variable map]`; `undefined` when malformed. */
export const subParts = (argument: unknown): { text: string; variables: Record<string, unknown> } | undefined => {
  if (typeof argument === 'string') return { text: argument, variables: {} };
  if (!Array.isArray(argument) || argument.length !== 2) return undefined;
  const [text, variables] = argument as unknown[];
  return typeof text === 'string' && isObject(variables) ? { text, variables } : undefined;
};

/** The placeholders of an `Fn::Sub` that its variable map does not define: references to the template. */
export const unboundPlaceholders = (argument: unknown): SubPlaceholder[] => {
  const parts = subParts(argument);
  if (parts === undefined) return [];
  const bound = (key: string): boolean => Object.hasOwn(parts.variables, key);
  return subPlaceholders(parts.text).filter(
    ({ name, attribute }) => !bound(name) && (attribute === undefined || !bound(`${name}.${attribute}`)),
  );
};

/**
 * Splits the argument of `Fn::GetAtt`, either `[Resource, Attribute]` or `"Resource.Attribute"`
 * (the resource id holds no dot, the attribute may). The attribute may itself be a `Ref`.
 */
export const getAttTarget = (argument: unknown): { resource: string; attribute: unknown } | undefined => {
  if (typeof argument === 'string') {
    const dot = argument.indexOf('.');
    return dot > 0 && dot < argument.length - 1
      ? { resource: argument.slice(0, dot), attribute: argument.slice(dot + 1) }
      : undefined;
  }
  if (Array.isArray(argument) && argument.length === 2 && typeof argument[0] === 'string') {
    return { resource: argument[0], attribute: argument[1] as unknown };
  }
  return undefined;
};
