/**
 * A tiny fake spec and template builder shared by the checker's tests, so each test names only
 * the part of a template it breaks.
 */
import {
  checkTemplate,
  type Problem,
  type ResourceSpec,
  type SpecLookup,
  type SpecType,
} from '../../../lib/deploy/check';

const STRING: SpecType = { kind: 'string' };
const INTEGER: SpecType = { kind: 'integer' };

/** A bucket with every kind of property, a queue, a function and a permission to invoke it. */
export const FAKE_TYPES: Readonly<Record<string, ResourceSpec>> = {
  'Fake::Store::Bucket': {
    properties: {
      BucketName: { type: STRING },
      Versioning: { type: { kind: 'object', definition: 'Versioning' } },
      Rules: { type: { kind: 'array', element: { kind: 'object', definition: 'Rule' } } },
      Labels: { type: { kind: 'map', element: STRING } },
      SubnetIds: { type: { kind: 'array', element: STRING } },
      Policy: { type: { kind: 'json' } },
      RetentionDays: { type: INTEGER },
      Ratio: { type: { kind: 'number' } },
      Public: { type: { kind: 'boolean' } },
      Tier: { type: { kind: 'string', allowedValues: ['HOT', 'COLD'] } },
    },
    attributes: new Set(['Arn', 'Endpoint.Address']),
    definitions: {
      Versioning: { Status: { type: STRING, required: true } },
      Rule: { Id: { type: STRING, required: true }, Days: { type: INTEGER } },
    },
  },
  'Fake::Queue::Queue': {
    properties: { QueueName: { type: STRING } },
    attributes: new Set(['Arn', 'QueueUrl']),
    definitions: {},
  },
  'Fake::Compute::Function': {
    properties: { Handler: { type: STRING, required: true }, Role: { type: STRING } },
    attributes: new Set(['Arn']),
    definitions: {},
  },
  'Fake::Compute::Permission': {
    properties: { FunctionName: { type: STRING, required: true }, SourceArn: { type: STRING } },
    attributes: new Set(),
    definitions: {},
  },
};
export const fakeSpec: SpecLookup = { resource: (type) => FAKE_TYPES[type] };

/** A template whose Store bucket has `properties`, beside a queue; `extra` adds or replaces sections. */
export const withBucket = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({
  Parameters: { Stage: { Type: 'String' }, Subnets: { Type: 'CommaDelimitedList' } },
  Conditions: { IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] } },
  Mappings: { Sizes: { prod: { Days: '30' } } },
  Resources: { Store: { Type: 'Fake::Store::Bucket', Properties: properties }, Jobs: { Type: 'Fake::Queue::Queue' } },
  ...extra,
});

export const check = (template: unknown): Problem[] => checkTemplate(template, fakeSpec);

/** A problem at exactly `path` whose message matches `message`. */
export const problem = (path: string, message: RegExp): Problem => ({
  path,
  message: expect.stringMatching(message) as string,
});
