/**
 * Offline CloudFormation template checker. Pure: it takes the parsed template and a spec and
 * returns every problem it finds, so CI can catch a broken template without AWS credentials.
 */
import { checkDependencies, dependsOnEntries } from './dependencies';
import { CONDITION_FUNCTIONS, asIntrinsic, isNoValue, mixedIntrinsicKey } from './intrinsics';
import { checkReferences, type TemplateIndex } from './references';
import { isCustomResourceType, isObject, type Problem, type SpecLookup } from './types';
import { checkProperties, checkValue } from './values';

export type { Problem, PropertySpec, PropertySpecs, ResourceSpec, SpecLookup, SpecType } from './types';

const SECTIONS = new Set([
  'AWSTemplateFormatVersion',
  'Description',
  'Metadata',
  'Parameters',
  'Rules',
  'Mappings',
  'Conditions',
  'Transform',
  'Resources',
  'Outputs',
]);
const RESOURCE_KEYS = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'Condition',
  'Metadata',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'UpdatePolicy',
  'CreationPolicy',
]);
const OUTPUT_KEYS = new Set(['Description', 'Value', 'Export', 'Condition']);
const RETENTION_POLICIES = ['Delete', 'Retain', 'RetainExceptOnCreate', 'Snapshot'];

/**
 * Checks a parsed template against the resource spec: its shape, resource types, property
 * names and types (nested ones too), required properties, every reference (`Ref`,
 * `Fn::GetAtt`, `Fn::Sub`, conditions, `DependsOn`) and function call, dependency cycles, and
 * uses of conditional resources their condition does not cover. Returns the problems section
 * by section, dependency problems last; an empty list means the template passed.
 */
export const checkTemplate = (template: unknown, spec: SpecLookup): Problem[] => {
  if (!isObject(template)) return [{ path: '(root)', message: 'a template must be a JSON object' }];
  const problems: Problem[] = [];
  for (const key of Object.keys(template)) {
    if (!SECTIONS.has(key)) problems.push({ path: key, message: `unknown template section ${key}` });
  }
  const resources = section(template, 'Resources', problems);
  if (template.Resources === undefined)
    problems.push({ path: 'Resources', message: 'a template needs a Resources section' });
  else if (isObject(template.Resources) && Object.keys(resources).length === 0) {
    problems.push({ path: 'Resources', message: 'a template needs at least one resource' });
  }
  const parameters = section(template, 'Parameters', problems);
  const conditions = section(template, 'Conditions', problems);
  const outputs = section(template, 'Outputs', problems);
  const index: TemplateIndex = {
    resourceTypes: new Map(Object.entries(resources).map(([id, r]) => [id, isObject(r) ? r.Type : undefined])),
    parameterTypes: new Map(
      Object.entries(parameters).map(([name, p]) => [
        name,
        isObject(p) && typeof p.Type === 'string' ? p.Type : undefined,
      ]),
    ),
    conditions: new Set(Object.keys(conditions)),
    mappings: section(template, 'Mappings', problems),
    spec,
  };

  for (const [name, parameter] of Object.entries(parameters)) {
    const at = `Parameters.${name}`;
    if (!isObject(parameter) || typeof parameter.Type !== 'string')
      problems.push({ path: at, message: 'a parameter needs a Type' });
    if (index.resourceTypes.has(name))
      problems.push({ path: at, message: `${name} names both a parameter and a resource` });
  }
  for (const [id, resource] of Object.entries(resources)) problems.push(...checkResource(id, resource, index));
  for (const [name, condition] of Object.entries(conditions)) {
    const at = `Conditions.${name}`;
    const fn = asIntrinsic(condition, true);
    if (fn === undefined || (!CONDITION_FUNCTIONS.has(fn.name) && fn.name !== 'Condition')) {
      problems.push({ path: at, message: 'a condition must be Fn::And, Fn::Equals, Fn::Not, Fn::Or or Condition' });
    }
    problems.push(...checkReferences(condition, at, 'Conditions', index));
  }
  for (const [name, output] of Object.entries(outputs)) problems.push(...checkOutput(name, output, index));
  problems.push(...checkDependencies(resources, outputs, conditions));
  return problems;
};

/** Counts for a summary line: how many resources and distinct resource types a template declares. */
export const summarizeTemplate = (template: unknown): { resources: number; types: number } => {
  const resources = isObject(template) && isObject(template.Resources) ? Object.values(template.Resources) : [];
  const types = new Set(resources.map((r) => (isObject(r) ? r.Type : undefined)).filter((t) => typeof t === 'string'));
  return { resources: resources.length, types: types.size };
};

/** An optional top-level section as an object; anything else is reported and read as empty. */
const section = (template: Record<string, unknown>, name: string, problems: Problem[]): Record<string, unknown> => {
  const value = template[name];
  if (value === undefined) return {};
  if (isObject(value)) return value;
  problems.push({ path: name, message: `${name} must be an object` });
  return {};
};

const checkResource = (id: string, resource: unknown, index: TemplateIndex): Problem[] => {
  const at = `Resources.${id}`;
  if (!isObject(resource)) return [{ path: at, message: 'a resource must be an object' }];
  const problems: Problem[] = [];
  const problem = (path: string, message: string): void => void problems.push({ path, message });
  for (const key of Object.keys(resource)) {
    if (!RESOURCE_KEYS.has(key)) problem(`${at}.${key}`, `unknown resource attribute ${key}`);
  }
  const dependsOn: unknown = resource.DependsOn;
  if (dependsOn !== undefined && typeof dependsOn !== 'string' && !Array.isArray(dependsOn)) {
    problem(`${at}.DependsOn`, 'DependsOn takes a resource name or a list of them');
  }
  for (const { target, path } of dependsOnEntries(dependsOn, `${at}.DependsOn`)) {
    if (typeof target !== 'string') problem(path, 'DependsOn takes resource names');
    else if (target === id) problem(path, `${id} cannot depend on itself`);
    else if (!index.resourceTypes.has(target)) problem(path, `DependsOn ${target}: no resource has that name`);
  }
  if (resource.Condition !== undefined) problems.push(...conditionName(resource.Condition, `${at}.Condition`, index));
  for (const key of ['DeletionPolicy', 'UpdateReplacePolicy']) {
    const policy = resource[key];
    // A policy may come from a parameter through Ref or Fn::If; only literals can be checked.
    if (policy !== undefined && asIntrinsic(policy) === undefined && !RETENTION_POLICIES.includes(policy as string)) {
      problem(`${at}.${key}`, `${key} must be one of ${RETENTION_POLICIES.join(', ')}`);
    }
  }
  const properties = resource.Properties ?? {};
  if (!isObject(properties)) problem(`${at}.Properties`, 'Properties must be an object');
  if (typeof resource.Type !== 'string') problem(`${at}.Type`, 'a resource needs a Type');
  // Properties that mix a function key with others are reported by checkReferences.
  else if (isObject(properties) && mixedIntrinsicKey(properties) === undefined)
    problems.push(...checkTyped(resource.Type, properties, at, index));
  problems.push(...checkReferences(resource, at, 'Resources', index));
  return problems;
};

/** Property names and types for a known type; custom resources need only their ServiceToken. */
const checkTyped = (type: string, properties: Record<string, unknown>, at: string, index: TemplateIndex): Problem[] => {
  const parameterType = (name: string): string | undefined => index.parameterTypes.get(name);
  const token = `${at}.Properties.ServiceToken`;
  if (isCustomResourceType(type)) {
    if (properties.ServiceToken === undefined || isNoValue(properties.ServiceToken))
      return [{ path: token, message: `missing required property ServiceToken of ${type}` }];
    return checkValue(properties.ServiceToken, { kind: 'string' }, token, { definitions: {}, parameterType });
  }
  const spec = index.spec.resource(type);
  if (spec === undefined) return [{ path: `${at}.Type`, message: `unknown resource type ${type}` }];
  return checkProperties(properties, spec.properties, type, `${at}.Properties`, {
    definitions: spec.definitions,
    parameterType,
  });
};

const checkOutput = (name: string, output: unknown, index: TemplateIndex): Problem[] => {
  const at = `Outputs.${name}`;
  if (!isObject(output)) return [{ path: at, message: 'an output must be an object' }];
  const problems: Problem[] = [];
  for (const key of Object.keys(output)) {
    if (!OUTPUT_KEYS.has(key)) problems.push({ path: `${at}.${key}`, message: `unknown output field ${key}` });
  }
  if (output.Value === undefined) problems.push({ path: `${at}.Value`, message: 'an output needs a Value' });
  if (output.Export !== undefined && !(isObject(output.Export) && output.Export.Name !== undefined)) {
    problems.push({ path: `${at}.Export`, message: 'Export needs a Name' });
  }
  if (output.Condition !== undefined) problems.push(...conditionName(output.Condition, `${at}.Condition`, index));
  problems.push(...checkReferences(output, at, 'Outputs', index));
  return problems;
};

const conditionName = (value: unknown, path: string, index: TemplateIndex): Problem[] => {
  if (typeof value !== 'string') return [{ path, message: 'Condition takes a condition name' }];
  return index.conditions.has(value) ? [] : [{ path, message: `no condition named ${value} in Conditions` }];
};
