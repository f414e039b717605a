/**
 * Finds dangling references anywhere intrinsic functions can appear: `Ref`, `Fn::GetAtt`,
 * `Fn::Sub` placeholders, `Fn::If` and `Condition` names, `Fn::FindInMap` keys. It walks
 * every value, json-typed ones included, because a policy document can Ref a deleted resource.
 */
import {
  CONDITION_FUNCTIONS,
  KNOWN_FUNCTIONS,
  PSEUDO_PARAMETERS,
  asIntrinsic,
  getAttTarget,
  subPlaceholders,
  type Intrinsic,
} from './intrinsics';
import { isCustomResourceType, isObject, type Problem, type SpecLookup } from './types';

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

/** Every dangling or misplaced reference in `value`, found at any depth. */
export const checkReferences = (value: unknown, path: string, section: Section, index: TemplateIndex): Problem[] => {
  const problems: Problem[] = [];
  const report = (at: string, message: string | undefined): void => {
    if (message !== undefined) problems.push({ path: at, message });
  };

  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      node.forEach((element, i) => walk(element, `${at}.${i}`));
      return;
    }
    if (!isObject(node)) return;
    const fn = asIntrinsic(node, section === 'Conditions');
    if (fn === undefined) {
      for (const [key, child] of Object.entries(node)) walk(child, `${at}.${key}`);
      return;
    }
    const fnPath = `${at}.${fn.name}`;
    call(fn, fnPath);
  };

  const call = (fn: Intrinsic, at: string): void => {
    const arg = fn.argument;
    switch (fn.name) {
      case 'Ref':
        if (typeof arg === 'string') report(at, refProblem(arg, section, index));
        else report(at, 'Ref takes a name');
        return;
      case 'Fn::GetAtt':
        return getAtt(arg, at);
      case 'Fn::Sub':
        return sub(arg, at);
      case 'Fn::If':
        if (!Array.isArray(arg) || arg.length !== 3 || typeof arg[0] !== 'string') {
          report(at, 'Fn::If takes [condition name, value if true, value if false]');
          return walk(arg, at);
        }
        report(`${at}.0`, conditionProblem(arg[0], index));
        walk(arg[1], `${at}.1`);
        return walk(arg[2], `${at}.2`);
      case 'Condition':
        if (typeof arg === 'string') report(at, conditionProblem(arg, index));
        else report(at, 'Condition takes a condition name');
        return;
      case 'Fn::FindInMap':
        findInMap(arg, at);
        return walk(arg, at);
      default:
        if (!KNOWN_FUNCTIONS.has(fn.name)) report(at, `unknown intrinsic function ${fn.name}`);
        else if (CONDITION_FUNCTIONS.has(fn.name) && section !== 'Conditions') {
          report(at, `${fn.name} is only allowed in Conditions; use Fn::If with a named condition`);
        }
        return walk(arg, at);
    }
  };

  const getAtt = (arg: unknown, at: string): void => {
    const target = getAttTarget(arg);
    if (target === undefined) {
      report(at, 'Fn::GetAtt takes [resource, attribute] or "resource.attribute"');
      return walk(arg, at);
    }
    if (typeof target.attribute === 'string') report(at, getAttProblem(target.resource, target.attribute, section, index));
    else {
      // The attribute name may come from a Ref; only the resource can be checked.
      report(at, getAttProblem(target.resource, undefined, section, index));
      walk(target.attribute, `${at}.1`);
    }
  };

  const sub = (arg: unknown, at: string): void => {
    let text: unknown = arg;
    let variables: Record<string, unknown> = {};
    if (Array.isArray(arg)) {
      const [first, second] = arg as unknown[];
      if (arg.length !== 2 || !isObject(second)) {
        report(at, 'Fn::Sub takes a string or [string, variable map]');
        return walk(arg, at);
      }
      text = first;
      variables = second;
      walk(variables, `${at}.1`);
    }
    if (typeof text !== 'string') {
      report(at, 'Fn::Sub takes a string or [string, variable map]');
      return;
    }
    for (const { name, attribute } of subPlaceholders(text)) {
      if (Object.hasOwn(variables, name) || Object.hasOwn(variables, `${name}.${attribute}`)) continue;
      const problem = attribute === undefined
        ? refProblem(name, section, index)
        : getAttProblem(name, attribute, section, index);
      const placeholder = attribute === undefined ? name : `${name}.${attribute}`;
      report(at, problem === undefined ? undefined : `\${${placeholder}}: ${problem}`);
    }
  };

  const findInMap = (arg: unknown, at: string): void => {
    if (!Array.isArray(arg) || arg.length < 3 || arg.length > 4) {
      report(at, 'Fn::FindInMap takes [map name, top-level key, second-level key]');
      return;
    }
    const [mapName, topKey, secondKey] = arg as unknown[];
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

  walk(value, path);
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
