/**
 * Builds a {@link SpecLookup} from `@aws-cdk/aws-service-spec`, the CloudFormation resource
 * schemas that AWS CDK generates its L1 constructs from. Reading the database takes most of a
 * second, so it is loaded on the first lookup, and each resource type is converted once.
 */
import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';
import type { PropertyType, ResourceProperties, SpecDatabase } from '@aws-cdk/service-spec-types';
import { FleetError } from '../core/errors';
import type { PropertySpecs, ResourceSpec, SpecLookup, SpecType } from './types';

/** The spec database could not be read (package missing or corrupt). */
export class SpecLoadError extends FleetError {}

/** The legacy tag type is always `{ Key, Value }`; no resource defines a type of this name. */
const TAG_DEFINITION = 'Tag';
const TAG_PROPERTIES: PropertySpecs = {
  Key: { type: { kind: 'string' }, required: true },
  Value: { type: { kind: 'string' }, required: true },
};

/**
 * A lookup over the spec database returned by `load`, called at most once, on the first
 * lookup. Defaults to the database bundled with `@aws-cdk/aws-service-spec`.
 */
export const createSpecLookup = (load: () => SpecDatabase = loadAwsServiceSpecSync): SpecLookup => {
  let db: SpecDatabase | undefined;
  const cache = new Map<string, ResourceSpec | undefined>();
  const database = (): SpecDatabase => {
    if (db !== undefined) return db;
    try {
      db = load();
    } catch (error) {
      throw new SpecLoadError('cannot load the CloudFormation spec from @aws-cdk/aws-service-spec', { cause: error });
    }
    return db;
  };
  return {
    resource(cloudFormationType) {
      if (!cache.has(cloudFormationType))
        cache.set(cloudFormationType, convertResource(database(), cloudFormationType));
      return cache.get(cloudFormationType);
    },
  };
};

const convertResource = (db: SpecDatabase, cloudFormationType: string): ResourceSpec | undefined => {
  const resource = db.lookup('resource', 'cloudFormationType', 'equals', cloudFormationType)[0];
  if (resource === undefined) return undefined;
  const definitions: Record<string, PropertySpecs> = {};
  /** Definition id → the name the converted types refer to it by. */
  const names = new Map<string, string>();

  const convertProperties = (properties: ResourceProperties): PropertySpecs =>
    Object.fromEntries(
      Object.entries(properties).map(([name, p]) => [
        name,
        { type: convertType(p.type), required: p.required === true },
      ]),
    );

  const convertType = (type: PropertyType): SpecType => {
    switch (type.type) {
      case 'string':
        return type.allowedValues === undefined
          ? { kind: 'string' }
          : { kind: 'string', allowedValues: type.allowedValues };
      case 'tag':
        definitions[TAG_DEFINITION] = TAG_PROPERTIES;
        return { kind: 'object', definition: TAG_DEFINITION };
      case 'ref':
        return { kind: 'object', definition: definitionName(type.reference.$ref) };
      case 'array':
      case 'map':
        return { kind: type.type, element: convertType(type.element) };
      case 'union':
        return { kind: 'union', types: type.types.map(convertType) };
      default:
        return { kind: type.type };
    }
  };

  // Registers the name before converting, so self-referencing types terminate.
  const definitionName = (id: string): string => {
    const known = names.get(id);
    if (known !== undefined) return known;
    const definition = db.get('typeDefinition', id);
    const taken = Object.hasOwn(definitions, definition.name) || definition.name === TAG_DEFINITION;
    const name = taken ? `${definition.name}#${id}` : definition.name;
    names.set(id, name);
    definitions[name] = {};
    definitions[name] = convertProperties(definition.properties);
    return name;
  };

  return {
    properties: convertProperties(resource.properties),
    attributes: new Set(Object.keys(resource.attributes)),
    definitions,
  };
};
