/**
 * Finds dangling references anywhere intrinsic functions can appear: `Ref`, `Fn::GetAtt`,
 * `Fn::Sub` placeholders, `Fn::If` and `Condition` names, `Fn::FindInMap` keys. It walks
 * every value, json-typed ones included, because a policy document can Ref a deleted resource;
 * on the way it checks each call's arguments (arguments.ts) and rejects objects that mix a
 * function key with other keys.
 */
import { argumentProblems } from './arguments';
import {
  CONDITION_FUNCTIONS,
  KNOWN_FUNCTIONS,
  PSEUDO_PARAMETERS,
  getAttTarget,
  unboundPlaceholders,
  type Intrinsic,
} from './intrinsics';
import { isCustomResourceType, isObject, type Problem, type SpecLookup } from './types';
import { walkCalls } from './walk';

/** The names a template declares, which references must resolve to. */
export interface TemplateIndex {
  /** Logical id → declared Type (whatever the template holds there). */
  readonly resourceTypes: ReadonlyMap<string, unknown>;
  /** Parameter name → declared Type. */
  readonly parameterTypes: ReadonlyMap<string, string | undefined>;
  readonly conditions: ReadonlySet<string>;
  readonly mappings: Readonly<Record<string, unknown>>;
  readonly spec: SpecLookup;
}

/** Where a value sits: Conditions are evaluated before any resource exists. */
export type Section = 'Resources' | 'Outputs' | 'Conditions';

/** Every dangling or misplaced reference and malformed call in `value`, found at any depth. */
export const checkReferences = (value: unknown, path: string, section: Section, index: TemplateIndex): Problem[] => {
  const problems: Problem[] = [];
  const report = (at: string, message: string | undefined): void => {
    if (message !== undefined) problems.push({ path: at, message });
  };
  const parameterType = (name: string): string | undefined => index.parameterTypes.get(name);

  const call = (fn: Intrinsic, at: string): void => {
    const malformed = argumentProblems(fn, at, parameterType);
    problems.push(...malformed);
    const arg = fn.argument;
    switch (fn.name) {
      case 'Ref':
        if (typeof arg === 'string') report(at, refProblem(arg, section, index));
        return;
      case 'Fn::GetAtt': {
        const target = getAttTarget(arg);
        // The attribute name may come from a Ref; then only the resource can be checked.
        const attribute = typeof target?.attribute === 'string' ? target.attribute : undefined;
        if (target !== undefined) report(at, getAttProblem(target.resource, attribute, section, index));
        return;
      }
      case 'Fn::Sub':
        for (const { name, attribute } of unboundPlaceholders(arg)) {
          const problem =
            attribute === undefined ? refProblem(name, section, index) : getAttProblem(name, attribute, section, index);
          const placeholder = attribute === undefined ? name : `${name}.${attribute}`;
          report(at, problem === undefined ? undefined : `\${${placeholder}}: ${problem}`);
        }
        return;
      case 'Fn::If':
        if (malformed.length === 0) report(`${at}.0`, conditionProblem((arg as unknown[])[0] as string, index));
        return;
      case 'Condition':
        if (typeof arg === 'string') report(at, conditionProblem(arg, index));
        else report(at, 'Condition takes a condition name');
        return;
      case 'Fn::FindInMap':
        if (malformed.length === 0) findInMap(arg as unknown[], at);
        return;
      default:
        if (!KNOWN_FUNCTIONS.has(fn.name)) report(at, `unknown intrinsic function ${fn.name}`);
        else if (CONDITION_FUNCTIONS.has(fn.name) && section !== 'Conditions') {
          report(at, `${fn.name} is only allowed in Conditions; use Fn::If with a named condition`);
        }
    }
  };

  const findInMap = (arg: readonly unknown[], at: string): void => {
    const [mapName, topKey, secondKey] = arg;
    if (typeof mapName !== 'string') return;
    const map = Object.hasOwn(index.mappings, mapName) ? index.mappings[mapName] : undefined;
    if (map === undefined) return report(`${at}.0`, `no mapping named ${mapName} in Mappings`);
    // Keys that come from Refs are resolved at deploy time; only literal keys can be checked.
    if (typeof topKey !== 'string' || !isObject(map)) return;
    const level = Object.hasOwn(map, topKey) ? map[topKey] : undefined;
    if (level === undefined) return report(`${at}.1`, `mapping ${mapName} has no key ${topKey}`);
    // A fourth argument is a DefaultValue (language extensions), so a missing second key is fine there.
    if (typeof secondKey === 'string' && isObject(level) && !Object.hasOwn(level, secondKey) && arg.length === 3) {
      report(`${at}.2`, `mapping ${mapName}.${topKey} has no key ${secondKey}`);
    }
  };

  walkCalls(
    value,
    path,
    {
      call: ({ fn, at }) => call(fn, at),
      mixed: (key, others, at) =>
        report(
          at,
          `${key} must be the only key of its object, but it has ${others.join(', ')} too; CloudFormation rejects this`,
        ),
    },
    section === 'Conditions',
  );
  return problems;
};

const refProblem = (name: string, section: Section, index: TemplateIndex): string | undefined => {
  if (PSEUDO_PARAMETERS.has(name) || index.parameterTypes.has(name)) return undefined;
  if (index.resourceTypes.has(name)) {
    return section === 'Conditions' ? `Conditions can only Ref parameters, not resource ${name}` : undefined;
  }
  return `no resource, parameter or pseudo parameter named ${name}`;
};

const getAttProblem = (
  resource: string,
  attribute: string | undefined,
  section: Section,
  index: TemplateIndex,
): string | undefined => {
  if (!index.resourceTypes.has(resource)) return `no resource named ${resource}`;
  if (section === 'Conditions') return `Conditions cannot read attributes of resource ${resource}`;
  const type = index.resourceTypes.get(resource);
  if (attribute === undefined || typeof type !== 'string' || isCustomResourceType(type)) return undefined;
  // An unknown type is reported once where it is declared.
  const attributes = index.spec.resource(type)?.attributes;
  if (attributes === undefined || hasAttribute(attributes, attribute)) return undefined;
  return `${resource} (${type}) has no attribute ${attribute}`;
};

/** Exact, or nested inside an object attribute (`Outputs.BucketName` of a nested stack). */
const hasAttribute = (attributes: ReadonlySet<string>, attribute: string): boolean => {
  const parts = attribute.split('.');
  return parts.some((_, i) => attributes.has(parts.slice(0, i + 1).join('.')));
};

const conditionProblem = (name: string, index: TemplateIndex): string | undefined =>
  index.conditions.has(name) ? undefined : `no condition named ${name} in Conditions`;
