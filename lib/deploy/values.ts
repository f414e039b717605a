/**
 * Checks property values against their spec types: unknown and missing properties, wrong
 * kinds of values, and intrinsic functions in slots they cannot fill. References inside the
 * values are checked separately (references.ts), so this module only reasons about types.
 */
import { asIntrinsic, isNoValue, mixedIntrinsicKey, resultShapes, type Intrinsic, type Shape } from './intrinsics';
import { isObject, own, type Problem, type PropertySpecs, type SpecType } from './types';

/** What a value check needs besides the value: the resource's nested types and parameters. */
export interface ValueContext {
  readonly definitions: Readonly<Record<string, PropertySpecs>>;
  readonly parameterType: (name: string) => string | undefined;
}

/** Checks an object of properties: every key known, every required key present, every value typed. */
export const checkProperties = (
  value: Record<string, unknown>,
  specs: PropertySpecs,
  owner: string,
  path: string,
  ctx: ValueContext,
): Problem[] => {
  const problems: Problem[] = [];
  for (const [name, child] of Object.entries(value)) {
    const spec = own(specs, name);
    if (spec === undefined) {
      problems.push({ path: `${path}.${name}`, message: unknownMessage(name, specs, owner) });
    } else {
      problems.push(...checkValue(child, spec.type, `${path}.${name}`, ctx));
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required !== true) continue;
    if (!Object.hasOwn(value, name))
      problems.push({ path: `${path}.${name}`, message: `missing required property ${name} of ${owner}` });
    // AWS::NoValue removes the property; inside Fn::If only one branch does, which may be intended.
    else if (isNoValue(value[name])) {
      problems.push({
        path: `${path}.${name}`,
        message: `missing required property ${name} of ${owner} (Ref AWS::NoValue removes it)`,
      });
    }
  }
  return problems;
};

/** Checks one value against `type`, descending into objects, lists and maps. */
export const checkValue = (value: unknown, type: SpecType, path: string, ctx: ValueContext): Problem[] => {
  const fn = asIntrinsic(value);
  if (fn !== undefined) return checkIntrinsic(fn, type, path, ctx);
  // `{ Ref, x }` is neither a call nor a value; the reference check, which sees every value, reports it.
  if (mixedIntrinsicKey(value) !== undefined) return [];
  const wrong = (): Problem[] => [{ path, message: `expected ${describeType(type)}, got ${describeValue(value)}` }];
  switch (type.kind) {
    case 'json':
      return [];
    case 'union':
      return checkUnion(value, type.types, path, ctx);
    case 'string':
      // CloudFormation turns numbers and booleans into their string form.
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return wrong();
      if (type.allowedValues !== undefined && !type.allowedValues.includes(String(value))) {
        return [{ path, message: `${describeValue(value)} is not one of ${type.allowedValues.join(', ')}` }];
      }
      return [];
    case 'date-time':
      return typeof value === 'string' ? [] : wrong();
    case 'number':
      return toNumber(value) !== undefined ? [] : wrong();
    case 'integer':
      return Number.isInteger(toNumber(value)) ? [] : wrong();
    case 'boolean':
      // Booleans arrive as strings from YAML and from parameters; CloudFormation coerces them.
      return typeof value === 'boolean' || value === 'true' || value === 'false' ? [] : wrong();
    case 'null':
      return value === null ? [] : wrong();
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((element, i) => checkValue(element, type.element, `${path}.${i}`, ctx))
        : wrong();
    case 'map':
      return isObject(value)
        ? Object.entries(value).flatMap(([key, element]) => checkValue(element, type.element, `${path}.${key}`, ctx))
        : wrong();
    case 'object': {
      if (!isObject(value)) return wrong();
      const specs = own(ctx.definitions, type.definition);
      // A spec that names a type it does not define is a gap in the spec, not in the template.
      return specs === undefined ? [] : checkProperties(value, specs, type.definition, path, ctx);
    }
  }
};

/** Accepts a call whose result can fill the slot; `Fn::If` is checked branch by branch. */
const checkIntrinsic = (fn: Intrinsic, type: SpecType, path: string, ctx: ValueContext): Problem[] => {
  if (fn.name === 'Ref' && fn.argument === 'AWS::NoValue') return [];
  if (fn.name === 'Fn::If') {
    // A malformed Fn::If is reported by the reference check, which sees every call.
    if (!Array.isArray(fn.argument) || fn.argument.length !== 3) return [];
    return [1, 2].flatMap((i) => checkValue((fn.argument as unknown[])[i], type, `${path}.Fn::If.${i}`, ctx));
  }
  const produced = resultShapes(fn, ctx.parameterType);
  if (produced === undefined) return [];
  const accepted = acceptedShapes(type);
  if (produced.some((shape) => accepted.has(shape))) return [];
  return [
    {
      path,
      message: `expected ${describeType(type)}, got ${fn.name}, which yields ${produced.map(article).join(' or ')}`,
    },
  ];
};

const checkUnion = (value: unknown, types: readonly SpecType[], path: string, ctx: ValueContext): Problem[] => {
  const attempts = types.map((member) => checkValue(value, member, path, ctx));
  if (attempts.some((problems) => problems.length === 0)) return [];
  // When the value had the right outer shape for a member, its inner problems are the useful ones.
  const inner = attempts.find((problems) => problems.every((p) => p.path !== path));
  return (
    inner ?? [{ path, message: `expected ${describeType({ kind: 'union', types })}, got ${describeValue(value)}` }]
  );
};

/** The shapes a slot of this type can hold. */
const acceptedShapes = (type: SpecType): ReadonlySet<Shape> => {
  switch (type.kind) {
    case 'json':
      return new Set<Shape>(['scalar', 'list', 'object']);
    case 'union':
      return new Set(type.types.flatMap((member) => [...acceptedShapes(member)]));
    case 'array':
      return new Set<Shape>(['list']);
    case 'map':
    case 'object':
      return new Set<Shape>(['object']);
    default:
      return new Set<Shape>(['scalar']);
  }
};

/** A number, or a string CloudFormation would read as one. */
const toNumber = (value: unknown): number | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
};

const unknownMessage = (name: string, specs: PropertySpecs, owner: string): string => {
  const near = Object.keys(specs).find((known) => known.toLowerCase() === name.toLowerCase());
  return `unknown property ${name} of ${owner}${near === undefined ? '' : ` (did you mean ${near}?)`}`;
};

/** `a scalar`, `a list`, `an object`, for messages. */
export const article = (shape: Shape): string => (shape === 'object' ? 'an object' : `a ${shape}`);

/** `a string`, `a list of integers`, `a VersioningConfiguration object`, … for messages. */
export const describeType = (type: SpecType): string => {
  switch (type.kind) {
    case 'array':
      return `a list of ${plural(type.element)}`;
    case 'map':
      return `a map of ${plural(type.element)}`;
    case 'object':
      return `a ${type.definition} object`;
    case 'union':
      return type.types.map(describeType).join(' or ');
    case 'integer':
      return 'an integer';
    case 'json':
      return 'JSON';
    case 'date-time':
      return 'a date-time string';
    default:
      return `a ${type.kind}`;
  }
};

const plural = (type: SpecType): string => {
  if (type.kind === 'json') return 'JSON values';
  if (type.kind === 'array' || type.kind === 'map' || type.kind === 'union') return `(${describeType(type)})`;
  return `${describeType(type).replace(/^an? /, '')}s`;
};

/** A short description of a JSON value for messages. */
export const describeValue = (value: unknown): string => {
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'an object';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  return String(value);
};
