import { check, problem, withBucket } from './fake-spec';

describe('checkTemplate', () => {
  describe('properties', () => {
    it.each([
      [
        'at the top level, suggesting a near match',
        { bucketName: 'b' },
        problem(
          'Resources.Store.Properties.bucketName',
          /unknown property bucketName of Fake::Store::Bucket \(did you mean BucketName\?\)/,
        ),
      ],
      [
        'in a nested type',
        { Versioning: { Status: 'Enabled', Mode: 'x' } },
        problem('Resources.Store.Properties.Versioning.Mode', /unknown property Mode of Versioning/),
      ],
      [
        'in a list element',
        { Rules: [{ Id: 'a' }, { Id: 'b', Dayz: 3 }] },
        problem('Resources.Store.Properties.Rules.1.Dayz', /unknown property Dayz of Rule/),
      ],
    ])('reports an unknown property %s', (_name, properties, expected) => {
      expect(check(withBucket(properties))).toEqual([expected]);
    });

    it('reports a missing required property of a resource and of a nested type', () => {
      const template = {
        Resources: {
          Fn: { Type: 'Fake::Compute::Function' },
          Store: { Type: 'Fake::Store::Bucket', Properties: { Versioning: {} } },
        },
      };
      expect(check(template)).toEqual([
        problem('Resources.Fn.Properties.Handler', /missing required property Handler of Fake::Compute::Function/),
        problem('Resources.Store.Properties.Versioning.Status', /missing required property Status of Versioning/),
      ]);
    });

    it.each([
      [
        'a resource',
        { Resources: { Fn: { Type: 'Fake::Compute::Function', Properties: { Handler: { Ref: 'AWS::NoValue' } } } } },
        'Resources.Fn.Properties.Handler',
        /^missing required property Handler of Fake::Compute::Function \(Ref AWS::NoValue removes it\)$/,
      ],
      [
        'a nested type',
        withBucket({ Versioning: { Status: { Ref: 'AWS::NoValue' } } }),
        'Resources.Store.Properties.Versioning.Status',
        /missing required property Status of Versioning/,
      ],
      [
        'a custom resource',
        { Resources: { Seed: { Type: 'Custom::Seeder', Properties: { ServiceToken: { Ref: 'AWS::NoValue' } } } } },
        'Resources.Seed.Properties.ServiceToken',
        /missing required property ServiceToken/,
      ],
    ])(
      'reports Ref AWS::NoValue as the whole of a required property of %s as missing',
      (_name, template, path, message) => {
        expect(check(template)).toEqual([problem(path, message)]);
      },
    );

    it('accepts AWS::NoValue in one Fn::If branch of a required property, and for an optional one', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Fn: {
              Type: 'Fake::Compute::Function',
              Properties: {
                Handler: { 'Fn::If': ['IsProd', 'index.handler', { Ref: 'AWS::NoValue' }] },
                Role: { Ref: 'AWS::NoValue' },
              },
            },
          },
        },
      );
      expect(check(template)).toEqual([]);
    });

    it('accepts anything in a json-typed property, however nested', () => {
      expect(
        check(
          withBucket({
            Policy: { Statement: [{ Effect: 'Allow', Condition: { Bool: { 'aws:SecureTransport': false } } }] },
          }),
        ),
      ).toEqual([]);
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
      [
        'Fn::Join, Fn::Sub and Fn::Select for strings',
        { BucketName: { 'Fn::Join': ['-', [{ 'Fn::Sub': 'x-${Stage}' }, { 'Fn::Select': [0, ['a']] }]] } },
      ],
      [
        'Fn::GetAtt and Fn::ImportValue for strings',
        { Labels: { arn: { 'Fn::GetAtt': ['Jobs', 'Arn'] }, vpc: { 'Fn::ImportValue': 'vpc-id' } } },
      ],
      ['Fn::FindInMap for an integer', { RetentionDays: { 'Fn::FindInMap': ['Sizes', 'prod', 'Days'] } }],
      [
        'Fn::Split, Fn::GetAZs and Fn::Cidr for lists',
        {
          SubnetIds: {
            'Fn::If': [
              'IsProd',
              { 'Fn::Split': [',', 'a,b'] },
              { 'Fn::If': ['IsProd', { 'Fn::GetAZs': '' }, { 'Fn::Cidr': ['10.0.0.0/16', 2, 8] }] },
            ],
          },
        },
      ],
      ['Ref to a CommaDelimitedList parameter for a list', { SubnetIds: { Ref: 'Subnets' } }],
      [
        'Fn::If with AWS::NoValue in one branch',
        { Versioning: { 'Fn::If': ['IsProd', { Status: 'Enabled' }, { Ref: 'AWS::NoValue' }] } },
      ],
      ['AWS::NoValue in a list element', { SubnetIds: ['a', { Ref: 'AWS::NoValue' }] }],
    ])('accepts %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });

    it.each([
      [
        'Fn::Split for a string',
        { BucketName: { 'Fn::Split': [',', 'a,b'] } },
        'BucketName',
        /got Fn::Split, which yields a list/,
      ],
      ['Ref for an object', { Versioning: { Ref: 'Stage' } }, 'Versioning', /expected a Versioning object, got Ref/],
      [
        'Ref to a list parameter for a string',
        { BucketName: { Ref: 'Subnets' } },
        'BucketName',
        /got Ref, which yields a list/,
      ],
      [
        'a bad Fn::If branch',
        { RetentionDays: { 'Fn::If': ['IsProd', 30, 'forever'] } },
        'RetentionDays.Fn::If.2',
        /expected an integer, got "forever"/,
      ],
      [
        'an unknown function',
        { BucketName: { 'Fn::Concat': ['a', 'b'] } },
        'BucketName.Fn::Concat',
        /unknown intrinsic function Fn::Concat/,
      ],
      [
        'a condition function outside Conditions',
        { Public: { 'Fn::Equals': ['a', 'b'] } },
        'Public.Fn::Equals',
        /only allowed in Conditions/,
      ],
    ])('rejects %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(`Resources.Store.Properties.${path}`, message)]);
    });
  });
});
