import { checkTemplate, summarizeTemplate, type Problem, type ResourceSpec, type SpecLookup, type SpecType } from '../../../lib/template/check';
import { createSpecLookup } from '../../../lib/template/spec';

const STRING: SpecType = { kind: 'string' };
const INTEGER: SpecType = { kind: 'integer' };

/** A tiny spec: a bucket with every kind of property, a queue, a function. */
const FAKE_TYPES: Readonly<Record<string, ResourceSpec>> = {
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
  'Fake::Queue::Queue': { properties: { QueueName: { type: STRING } }, attributes: new Set(['Arn', 'QueueUrl']), definitions: {} },
  'Fake::Compute::Function': {
    properties: { Handler: { type: STRING, required: true }, Role: { type: STRING } },
    attributes: new Set(['Arn']),
    definitions: {},
  },
};
const fakeSpec: SpecLookup = { resource: (type) => FAKE_TYPES[type] };

/** A template whose Store bucket has `properties`, beside a queue; `extra` adds or replaces sections. */
const withBucket = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({
  Parameters: { Stage: { Type: 'String' }, Subnets: { Type: 'CommaDelimitedList' } },
  Conditions: { IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] } },
  Mappings: { Sizes: { prod: { Days: '30' } } },
  Resources: { Store: { Type: 'Fake::Store::Bucket', Properties: properties }, Jobs: { Type: 'Fake::Queue::Queue' } },
  ...extra,
});
const check = (template: unknown): Problem[] => checkTemplate(template, fakeSpec);
const problem = (path: string, message: RegExp): Problem => ({ path, message: expect.stringMatching(message) as string });

describe('checkTemplate', () => {
  describe('template shape', () => {
    it('passes a well-formed template', () => {
      expect(check(withBucket({ BucketName: 'b', Versioning: { Status: 'Enabled' } }))).toEqual([]);
    });

    it.each([
      ['a template that is not an object', [], problem('(root)', /JSON object/)],
      ['a template without Resources', { Outputs: {} }, problem('Resources', /needs a Resources section/)],
      ['an empty Resources section', { Resources: {} }, problem('Resources', /at least one resource/)],
      ['an unknown top-level section', { Resource: {}, Resources: { Jobs: { Type: 'Fake::Queue::Queue' } } }, problem('Resource', /unknown template section/)],
      ['a Parameters section that is a list', { Parameters: [], Resources: { Jobs: { Type: 'Fake::Queue::Queue' } } }, problem('Parameters', /must be an object/)],
      ['a resource without a Type', { Resources: { Jobs: { Properties: {} } } }, problem('Resources.Jobs.Type', /needs a Type/)],
      ['an unknown resource attribute', { Resources: { Jobs: { Type: 'Fake::Queue::Queue', Propertis: {} } } }, problem('Resources.Jobs.Propertis', /unknown resource attribute/)],
      ['a DeletionPolicy that does not exist', { Resources: { Jobs: { Type: 'Fake::Queue::Queue', DeletionPolicy: 'Keep' } } }, problem('Resources.Jobs.DeletionPolicy', /must be one of Delete, Retain/)],
      ['an output without a Value', { Resources: { Jobs: { Type: 'Fake::Queue::Queue' } }, Outputs: { Url: { Description: 'd' } } }, problem('Outputs.Url.Value', /needs a Value/)],
    ])('reports %s', (_name, template, expected) => {
      expect(check(template)).toEqual([expected]);
    });
  });

  describe('resource types', () => {
    it('reports a type the spec does not know', () => {
      expect(check({ Resources: { Jobs: { Type: 'Fake::Queue::Queu' } } })).toEqual([problem('Resources.Jobs.Type', /unknown resource type Fake::Queue::Queu/)]);
    });

    it.each(['Custom::Seeder', 'AWS::CloudFormation::CustomResource'])('lets %s take any properties and return any attribute', (type) => {
      const template = { Resources: {
        Seed: { Type: type, Properties: { ServiceToken: 'arn:aws:lambda:x', Whatever: { Deep: [1] } } },
        Store: { Type: 'Fake::Store::Bucket', Properties: { BucketName: { 'Fn::GetAtt': ['Seed', 'Anything'] } } },
      } };
      expect(check(template)).toEqual([]);
    });

    it('still wants a ServiceToken on a custom resource', () => {
      expect(check({ Resources: { Seed: { Type: 'Custom::Seeder', Properties: {} } } })).toEqual([problem('Resources.Seed.Properties.ServiceToken', /missing required/)]);
    });
  });

  describe('properties', () => {
    it.each([
      ['at the top level, suggesting a near match', { bucketName: 'b' }, problem('Resources.Store.Properties.bucketName', /unknown property bucketName of Fake::Store::Bucket \(did you mean BucketName\?\)/)],
      ['in a nested type', { Versioning: { Status: 'Enabled', Mode: 'x' } }, problem('Resources.Store.Properties.Versioning.Mode', /unknown property Mode of Versioning/)],
      ['in a list element', { Rules: [{ Id: 'a' }, { Id: 'b', Dayz: 3 }] }, problem('Resources.Store.Properties.Rules.1.Dayz', /unknown property Dayz of Rule/)],
    ])('reports an unknown property %s', (_name, properties, expected) => {
      expect(check(withBucket(properties))).toEqual([expected]);
    });

    it('reports a missing required property of a resource and of a nested type', () => {
      const template = { Resources: { Fn: { Type: 'Fake::Compute::Function' }, Store: { Type: 'Fake::Store::Bucket', Properties: { Versioning: {} } } } };
      expect(check(template)).toEqual([
        problem('Resources.Fn.Properties.Handler', /missing required property Handler of Fake::Compute::Function/),
        problem('Resources.Store.Properties.Versioning.Status', /missing required property Status of Versioning/),
      ]);
    });

    it('accepts anything in a json-typed property, however nested', () => {
      expect(check(withBucket({ Policy: { Statement: [{ Effect: 'Allow', Condition: { Bool: { 'aws:SecureTransport': false } } }] } }))).toEqual([]);
    });
  });

  describe('value types', () => {
    it.each([
      ['a numeric string for an integer', { RetentionDays: '30' }],
      ['a numeric string for a number', { Ratio: '0.5' }],
      ['a number for a string', { BucketName: 42 }],
      ['"true" for a boolean', { Public: 'true' }],
      ['an allowed value', { Tier: 'COLD' }],
      ['a map of strings', { Labels: { team: 'media', cost: 7 } }],
    ])('accepts %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });

    it.each([
      ['an object for a string', { BucketName: { Name: 'b' } }, 'BucketName', /expected a string, got an object/],
      ['a word for an integer', { RetentionDays: 'thirty' }, 'RetentionDays', /expected an integer, got "thirty"/],
      ['a fraction for an integer', { RetentionDays: 1.5 }, 'RetentionDays', /expected an integer/],
      ['"yes" for a boolean', { Public: 'yes' }, 'Public', /expected a boolean/],
      ['a list for a scalar', { BucketName: ['b'] }, 'BucketName', /expected a string, got a list/],
      ['a scalar for an object', { Versioning: 'Enabled' }, 'Versioning', /expected a Versioning object/],
      ['a scalar for a list', { SubnetIds: 'subnet-1' }, 'SubnetIds', /expected a list of strings/],
      ['a value outside the allowed ones', { Tier: 'hot' }, 'Tier', /"hot" is not one of HOT, COLD/],
      ['an object in a map of strings', { Labels: { team: { name: 'media' } } }, 'Labels.team', /expected a string/],
    ])('rejects %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(`Resources.Store.Properties.${path}`, message)]);
    });
  });

  describe('intrinsic functions in values', () => {
    it.each([
      ['Ref to a parameter for a string', { BucketName: { Ref: 'Stage' } }],
      ['Fn::Join, Fn::Sub and Fn::Select for strings', { BucketName: { 'Fn::Join': ['-', [{ 'Fn::Sub': 'x-${Stage}' }, { 'Fn::Select': [0, ['a']] }]] } }],
      ['Fn::GetAtt and Fn::ImportValue for strings', { Labels: { arn: { 'Fn::GetAtt': ['Jobs', 'Arn'] }, vpc: { 'Fn::ImportValue': 'vpc-id' } } }],
      ['Fn::FindInMap for an integer', { RetentionDays: { 'Fn::FindInMap': ['Sizes', 'prod', 'Days'] } }],
      ['Fn::Split, Fn::GetAZs and Fn::Cidr for lists', { SubnetIds: { 'Fn::If': ['IsProd', { 'Fn::Split': [',', 'a,b'] }, { 'Fn::If': ['IsProd', { 'Fn::GetAZs': '' }, { 'Fn::Cidr': ['10.0.0.0/16', 2, 8] }] }] } }],
      ['Ref to a CommaDelimitedList parameter for a list', { SubnetIds: { Ref: 'Subnets' } }],
      ['Fn::If with AWS::NoValue in one branch', { Versioning: { 'Fn::If': ['IsProd', { Status: 'Enabled' }, { Ref: 'AWS::NoValue' }] } }],
      ['AWS::NoValue in a list element', { SubnetIds: ['a', { Ref: 'AWS::NoValue' }] }],
    ])('accepts %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });

    it.each([
      ['Fn::Split for a string', { BucketName: { 'Fn::Split': [',', 'a,b'] } }, 'BucketName', /got Fn::Split, which yields a list/],
      ['Ref for an object', { Versioning: { Ref: 'Stage' } }, 'Versioning', /expected a Versioning object, got Ref/],
      ['Ref to a list parameter for a string', { BucketName: { Ref: 'Subnets' } }, 'BucketName', /got Ref, which yields a list/],
      ['a bad Fn::If branch', { RetentionDays: { 'Fn::If': ['IsProd', 30, 'forever'] } }, 'RetentionDays.Fn::If.2', /expected an integer, got "forever"/],
      ['an unknown function', { BucketName: { 'Fn::Concat': ['a', 'b'] } }, 'BucketName.Fn::Concat', /unknown intrinsic function Fn::Concat/],
      ['a condition function outside Conditions', { Public: { 'Fn::Equals': ['a', 'b'] } }, 'Public.Fn::Equals', /only allowed in Conditions/],
    ])('rejects %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(`Resources.Store.Properties.${path}`, message)]);
    });
  });

  describe('references', () => {
    const at = (path: string): string => `Resources.Store.Properties.${path}`;

    it.each([
      ['a dangling Ref', { BucketName: { Ref: 'Gone' } }, at('BucketName.Ref'), /no resource, parameter or pseudo parameter named Gone/],
      ['a dangling Ref inside a json-typed policy', { Policy: { Statement: [{ Resource: { Ref: 'Gone' } }] } }, at('Policy.Statement.0.Resource.Ref'), /named Gone/],
      ['Fn::GetAtt to a missing resource', { BucketName: { 'Fn::GetAtt': ['Gone', 'Arn'] } }, at('BucketName.Fn::GetAtt'), /no resource named Gone/],
      ['Fn::GetAtt "A.B" to a missing resource', { BucketName: { 'Fn::GetAtt': 'Gone.Arn' } }, at('BucketName.Fn::GetAtt'), /no resource named Gone/],
      ['Fn::GetAtt to an attribute the type lacks', { BucketName: { 'Fn::GetAtt': ['Jobs', 'Url'] } }, at('BucketName.Fn::GetAtt'), /Jobs \(Fake::Queue::Queue\) has no attribute Url/],
      ['Fn::GetAtt "A.B" to an attribute the type lacks', { BucketName: { 'Fn::GetAtt': 'Jobs.Url' } }, at('BucketName.Fn::GetAtt'), /has no attribute Url/],
      ['a dangling ${Name} in Fn::Sub', { BucketName: { 'Fn::Sub': 'b-${Stage}-${Gone}' } }, at('BucketName.Fn::Sub'), /\$\{Gone\}: no resource, parameter or pseudo parameter named Gone/],
      ['a ${Name.Attr} in Fn::Sub the type lacks', { BucketName: { 'Fn::Sub': '${Jobs.Url}' } }, at('BucketName.Fn::Sub'), /\$\{Jobs.Url\}: .*has no attribute Url/],
      ['a dangling Ref in a Fn::Sub variable', { BucketName: { 'Fn::Sub': ['${X}', { X: { Ref: 'Gone' } }] } }, at('BucketName.Fn::Sub.1.X.Ref'), /named Gone/],
      ['a missing condition in Fn::If', { BucketName: { 'Fn::If': ['IsDev', 'a', 'b'] } }, at('BucketName.Fn::If.0'), /no condition named IsDev/],
      ['a malformed Fn::If', { BucketName: { 'Fn::If': ['IsProd', 'a'] } }, at('BucketName.Fn::If'), /Fn::If takes/],
      ['a missing mapping key', { BucketName: { 'Fn::FindInMap': ['Sizes', 'dev', 'Days'] } }, at('BucketName.Fn::FindInMap.1'), /mapping Sizes has no key dev/],
    ])('reports %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(path, message)]);
    });

    it.each([
      ['pseudo parameters', { BucketName: { 'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, { Ref: 'AWS::Region' }, { Ref: 'AWS::URLSuffix' }]] } }],
      ['escaped ${!Literal} and pseudo parameters in Fn::Sub', { BucketName: { 'Fn::Sub': '${!Literal}-${AWS::AccountId}-${Jobs.Arn}' } }],
      ['names defined by the Fn::Sub variable map', { BucketName: { 'Fn::Sub': ['${Prefix}-${Queue.Url}', { Prefix: 'p', 'Queue.Url': 'u' }] } }],
      ['a dotted attribute', { BucketName: { 'Fn::GetAtt': 'Store.Endpoint.Address' } }],
    ])('resolves %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });

    it('checks DependsOn targets in both forms', () => {
      const template = withBucket({}, { Resources: {
        Store: { Type: 'Fake::Store::Bucket', DependsOn: 'Nowhere' },
        Jobs: { Type: 'Fake::Queue::Queue', DependsOn: ['Store', 'Jobs', 'Elsewhere'] },
      } });
      expect(check(template)).toEqual([
        problem('Resources.Store.DependsOn', /DependsOn Nowhere: no resource/),
        problem('Resources.Jobs.DependsOn.1', /cannot depend on itself/),
        problem('Resources.Jobs.DependsOn.2', /DependsOn Elsewhere: no resource/),
      ]);
    });

    it('checks Condition names on resources and outputs', () => {
      const template = withBucket({}, {
        Resources: { Store: { Type: 'Fake::Store::Bucket', Condition: 'IsDev' }, Jobs: { Type: 'Fake::Queue::Queue', Condition: 'IsProd' } },
        Outputs: { Name: { Value: { Ref: 'Store' }, Condition: 'IsStaging' } },
      });
      expect(check(template)).toEqual([
        problem('Resources.Store.Condition', /no condition named IsDev/),
        problem('Outputs.Name.Condition', /no condition named IsStaging/),
      ]);
    });

    it('checks references in Outputs, Metadata and Conditions', () => {
      const template = withBucket({}, {
        Resources: { Store: { Type: 'Fake::Store::Bucket', Metadata: { Source: { Ref: 'Gone' } } }, Jobs: { Type: 'Fake::Queue::Queue' } },
        Conditions: {
          IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
          HasJobs: { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'Jobs' }, ''] }] },
          Both: { 'Fn::And': [{ Condition: 'IsProd' }, { Condition: 'IsDev' }] },
          Literal: 'true',
        },
        Outputs: { Url: { Value: { 'Fn::GetAtt': ['Jobs', 'Url'] }, Export: { Name: { 'Fn::Sub': '${Missing}-url' } } } },
      });
      expect(check(template)).toEqual([
        problem('Resources.Store.Metadata.Source.Ref', /named Gone/),
        problem('Conditions.HasJobs.Fn::Not.0.Fn::Equals.0.Ref', /Conditions can only Ref parameters, not resource Jobs/),
        problem('Conditions.Both.Fn::And.1.Condition', /no condition named IsDev/),
        problem('Conditions.Literal', /a condition must be/),
        problem('Outputs.Url.Value.Fn::GetAtt', /has no attribute Url/),
        problem('Outputs.Url.Export.Name.Fn::Sub', /\$\{Missing\}/),
      ]);
    });
  });

  describe('summarizeTemplate', () => {
    it('counts resources and distinct types', () => {
      expect(summarizeTemplate({ Resources: { A: { Type: 'X::Y::Z' }, B: { Type: 'X::Y::Z' }, C: { Type: 'X::Y::W' } } })).toEqual({ resources: 3, types: 2 });
    });
  });
});

describe('checkTemplate with the real CloudFormation spec', () => {
  let spec: SpecLookup;
  beforeAll(() => {
    spec = createSpecLookup();
    spec.resource('AWS::S3::Bucket'); // loads the database once, outside the tests' own time
  });

  /** A small, valid stack in the style serverless emits; each test breaks one thing. */
  const stack = (): Record<string, Record<string, Record<string, unknown>>> => ({
    Conditions: { IsProd: { 'Fn::Equals': [{ Ref: 'AWS::StackName' }, 'fleet-prod'] } },
    Resources: {
      DeadLetters: { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: '1209600' } },
      Jobs: {
        Type: 'AWS::SQS::Queue',
        Properties: { VisibilityTimeout: 60, RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['DeadLetters', 'Arn'] }, maxReceiveCount: 5 } },
      },
      Alerts: { Type: 'AWS::SNS::Topic', Properties: { TopicName: 'fleet-events', Tags: [{ Key: 'team', Value: 'media' }] } },
      AlertsByMail: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: 'Alerts' } } },
      Role: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] }] },
          Policies: [{
            PolicyName: 'fleet',
            PolicyDocument: { Statement: [{ Effect: 'Allow', Action: ['sqs:*'], Resource: { 'Fn::GetAtt': 'Jobs.Arn' }, Condition: { Bool: { 'aws:SecureTransport': 'true' } } }] },
          }],
        },
      },
      Watchdog: {
        Type: 'AWS::Lambda::Function',
        DependsOn: ['Role'],
        Properties: {
          Code: { ZipFile: 'exports.handler = async () => {}' },
          Role: { 'Fn::GetAtt': ['Role', 'Arn'] },
          Runtime: 'nodejs22.x',
          MemorySize: '256',
          Timeout: 45,
          Environment: { Variables: { TOPIC: { Ref: 'Alerts' }, QUEUE: { 'Fn::Sub': ['${Url}?stack=${AWS::StackName}', { Url: { 'Fn::GetAtt': ['Jobs', 'QueueUrl'] } }] } } },
        },
      },
      State: {
        Type: 'AWS::S3::Bucket',
        Properties: { VersioningConfiguration: { 'Fn::If': ['IsProd', { Status: 'Enabled' }, { Ref: 'AWS::NoValue' }] } },
      },
    },
    Outputs: { JobsArn: { Value: { 'Fn::GetAtt': ['Jobs', 'Arn'] }, Export: { Name: { 'Fn::Sub': '${AWS::StackName}-jobs' } } } },
  });

  it('passes a valid stack: numeric strings, json policies, Fn::If with AWS::NoValue, Fn::Sub variables, real attributes', () => {
    expect(checkTemplate(stack(), spec)).toEqual([]);
  });

  it.each([
    ['an unknown resource type', (t: ReturnType<typeof stack>) => { t.Resources.Jobs.Type = 'AWS::SQS::Queues'; }, problem('Resources.Jobs.Type', /unknown resource type AWS::SQS::Queues/)],
    ['an unknown top-level property', (t: ReturnType<typeof stack>) => { t.Resources.Alerts.Properties = { TopicNme: 'x' }; }, problem('Resources.Alerts.Properties.TopicNme', /unknown property TopicNme of AWS::SNS::Topic/)],
    ['an unknown nested property', (t: ReturnType<typeof stack>) => { t.Resources.State.Properties = { VersioningConfiguration: { Status: 'Enabled', MfaDelete: 'Enabled' } }; }, problem('Resources.State.Properties.VersioningConfiguration.MfaDelete', /unknown property MfaDelete of VersioningConfiguration/)],
    ['a value outside the allowed ones', (t: ReturnType<typeof stack>) => { t.Resources.State.Properties = { VersioningConfiguration: { Status: 'enabled' } }; }, problem('Resources.State.Properties.VersioningConfiguration.Status', /"enabled" is not one of Enabled, Suspended/)],
    ['an object for an integer', (t: ReturnType<typeof stack>) => { t.Resources.Jobs.Properties = { VisibilityTimeout: { seconds: 60 } }; }, problem('Resources.Jobs.Properties.VisibilityTimeout', /expected an integer, got an object/)],
    ['a missing required property', (t: ReturnType<typeof stack>) => { delete (t.Resources.AlertsByMail.Properties as Record<string, unknown>).Protocol; }, problem('Resources.AlertsByMail.Properties.Protocol', /missing required property Protocol of AWS::SNS::Subscription/)],
    ['a tag without a Value', (t: ReturnType<typeof stack>) => { t.Resources.Alerts.Properties = { Tags: [{ Key: 'team' }] }; }, problem('Resources.Alerts.Properties.Tags.0.Value', /missing required property Value of Tag/)],
    ['an attribute the queue does not have', (t: ReturnType<typeof stack>) => { t.Outputs.JobsArn.Value = { 'Fn::GetAtt': ['Jobs', 'Url'] }; }, problem('Outputs.JobsArn.Value.Fn::GetAtt', /Jobs \(AWS::SQS::Queue\) has no attribute Url/)],
  ])('reports %s', (_name, breakIt, expected) => {
    const template = stack();
    breakIt(template);
    expect(checkTemplate(template, spec)).toEqual([expected]);
  });
});
