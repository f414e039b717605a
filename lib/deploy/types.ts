/**
 * The vocabulary of the template checker: what it needs to know about CloudFormation resource
 * types (a {@link SpecLookup}) and what it reports (a {@link Problem}). Kept apart from the
 * spec library so tests can hand the checker a tiny fake spec.
 */

/**
 * The type a property value must have. Scalars follow the CloudFormation resource schema;
 * `object` names a property type in {@link ResourceSpec.definitions}; `json` accepts anything.
 */
export type SpecType =
  | { readonly kind: 'string'; readonly allowedValues?: readonly string[] }
  | { readonly kind: 'number' | 'integer' | 'boolean' | 'json' | 'date-time' | 'null' }
  | { readonly kind: 'object'; readonly definition: string }
  | { readonly kind: 'array' | 'map'; readonly element: SpecType }
  | { readonly kind: 'union'; readonly types: readonly SpecType[] };

/** One property of a resource or of a nested property type. */
export interface PropertySpec {
  readonly type: SpecType;
  /** CloudFormation rejects the resource when a required property is absent. */
  readonly required?: boolean;
}

/** Property name → spec, for a resource or a nested property type. */
export type PropertySpecs = Readonly<Record<string, PropertySpec>>;

/** What the checker knows about one resource type, e.g. `AWS::S3::Bucket`. */
export interface ResourceSpec {
  readonly properties: PropertySpecs;
  /** Names `Fn::GetAtt` accepts; dotted names (`Endpoint.Address`) are listed whole. */
  readonly attributes: ReadonlySet<string>;
  /** Nested property types by the name an `object` type refers to. */
  readonly definitions: Readonly<Record<string, PropertySpecs>>;
}

/** Resolves a CloudFormation type name to its spec; `undefined` when the type does not exist. */
export interface SpecLookup {
  resource(cloudFormationType: string): ResourceSpec | undefined;
}

/** One thing wrong with a template. */
export interface Problem {
  /** Dotted path to the offending value, e.g. `Resources.StateBucket.Properties.VersioningConfiguration.Status`. */
  readonly path: string;
  readonly message: string;
}

/** A JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Own-property lookup, so names like `constructor` never hit the prototype. */
export const own = <T>(record: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** Custom resources take any properties and return any attributes. */
export const isCustomResourceType = (type: string): boolean =>
  type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource';
