import { check, problem, withBucket } from './fake-spec';

const at = (path: string): string => `Resources.Store.Properties.${path}`;

describe('checkTemplate', () => {
  describe('function arguments', () => {
    it.each([
      [
        'Fn::Join without its list',
        { BucketName: { 'Fn::Join': ['-'] } },
        at('BucketName.Fn::Join'),
        /Fn::Join takes \[delimiter, list of values\]/,
      ],
      [
        'a Fn::Join delimiter from a function',
        { BucketName: { 'Fn::Join': [{ Ref: 'Stage' }, ['a']] } },
        at('BucketName.Fn::Join.0'),
        /the Fn::Join delimiter must be a literal string, got an object/,
      ],
      [
        'Fn::Join of a string',
        { BucketName: { 'Fn::Join': ['-', 'a,b'] } },
        at('BucketName.Fn::Join.1'),
        /Fn::Join needs a list of values, got "a,b"/,
      ],
      [
        'Fn::Join of a function yielding one value',
        { BucketName: { 'Fn::Join': ['-', { 'Fn::Sub': 'a' }] } },
        at('BucketName.Fn::Join.1'),
        /got Fn::Sub, which yields a scalar/,
      ],
      [
        'Fn::Join of a list holding a list',
        { BucketName: { 'Fn::Join': ['-', ['a', ['b']]] } },
        at('BucketName.Fn::Join.1.1'),
        /Fn::Join joins strings, got a list/,
      ],
      [
        'Fn::Join of a list holding Fn::Split',
        { BucketName: { 'Fn::Join': ['-', ['a', { 'Fn::Split': [',', 'b,c'] }]] } },
        at('BucketName.Fn::Join.1.1'),
        /Fn::Join joins strings, got Fn::Split, which yields a list/,
      ],
      [
        'Fn::Select without its list',
        { BucketName: { 'Fn::Select': [0] } },
        at('BucketName.Fn::Select'),
        /Fn::Select takes \[index, list\]/,
      ],
      [
        'a Fn::Select index that is a word',
        { BucketName: { 'Fn::Select': ['first', ['a']] } },
        at('BucketName.Fn::Select.0'),
        /index must be a non-negative integer, got "first"/,
      ],
      [
        'a negative Fn::Select index',
        { BucketName: { 'Fn::Select': [-1, ['a']] } },
        at('BucketName.Fn::Select.0'),
        /index must be a non-negative integer, got -1/,
      ],
      [
        'a Fn::Select index past the end of its list',
        { BucketName: { 'Fn::Select': [2, ['a', 'b']] } },
        at('BucketName.Fn::Select.0'),
        /index 2 is out of range for a list of 2/,
      ],
      [
        'Fn::Select from a string',
        { BucketName: { 'Fn::Select': [0, 'a,b'] } },
        at('BucketName.Fn::Select.1'),
        /Fn::Select needs a list, got "a,b"/,
      ],
      [
        'Fn::Select from a Ref to a String parameter',
        { BucketName: { 'Fn::Select': [0, { Ref: 'Stage' }] } },
        at('BucketName.Fn::Select.1'),
        /got Ref, which yields a scalar/,
      ],
      [
        'Fn::Split without its string',
        { SubnetIds: { 'Fn::Split': [','] } },
        at('SubnetIds.Fn::Split'),
        /Fn::Split takes \[delimiter, string\]/,
      ],
      [
        'a Fn::Split delimiter from a function',
        { SubnetIds: { 'Fn::Split': [{ Ref: 'Stage' }, 'a'] } },
        at('SubnetIds.Fn::Split.0'),
        /the Fn::Split delimiter must be a literal string/,
      ],
      [
        'Fn::Split of a list',
        { SubnetIds: { 'Fn::Split': [',', ['a']] } },
        at('SubnetIds.Fn::Split.1'),
        /Fn::Split splits a string, got a list/,
      ],
      [
        'Fn::Split of a list parameter',
        { SubnetIds: { 'Fn::Split': [',', { Ref: 'Subnets' }] } },
        at('SubnetIds.Fn::Split.1'),
        /got Ref, which yields a list/,
      ],
      [
        'a Fn::GetAtt attribute that is a number',
        { BucketName: { 'Fn::GetAtt': ['Jobs', 5] } },
        at('BucketName.Fn::GetAtt.1'),
        /the Fn::GetAtt attribute must be a name or a Ref/,
      ],
      [
        'a Fn::GetAtt with three elements',
        { BucketName: { 'Fn::GetAtt': ['Jobs', 'Arn', 'x'] } },
        at('BucketName.Fn::GetAtt'),
        /Fn::GetAtt takes \[resource, attribute\]/,
      ],
      [
        'a Fn::GetAtt string without an attribute',
        { BucketName: { 'Fn::GetAtt': 'Jobs' } },
        at('BucketName.Fn::GetAtt'),
        /Fn::GetAtt takes/,
      ],
      [
        'a Fn::Sub with a list for its variables',
        { BucketName: { 'Fn::Sub': ['${X}', ['x']] } },
        at('BucketName.Fn::Sub'),
        /Fn::Sub takes a string or \[string, variable map\]/,
      ],
      ['a Fn::Sub of a number', { BucketName: { 'Fn::Sub': 5 } }, at('BucketName.Fn::Sub'), /Fn::Sub takes/],
      [
        'a Fn::If on a function rather than a condition name',
        { BucketName: { 'Fn::If': [{ Ref: 'Stage' }, 'a', 'b'] } },
        at('BucketName.Fn::If'),
        /Fn::If takes \[condition name, value if true, value if false\]/,
      ],
      ['a Ref to a list', { BucketName: { Ref: ['Stage'] } }, at('BucketName.Ref'), /Ref takes a name/],
    ])('reports %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(path, message)]);
    });

    it.each([
      [
        'Fn::Join of Fn::Split, a list parameter, Fn::GetAZs and Fn::If',
        {
          Labels: {
            a: { 'Fn::Join': ['-', { 'Fn::Split': [',', 'a,b'] }] },
            b: { 'Fn::Join': [',', { Ref: 'Subnets' }] },
            c: { 'Fn::Join': ['', { 'Fn::GetAZs': '' }] },
            d: { 'Fn::Join': ['', { 'Fn::If': ['IsProd', ['a'], ['b']] }] },
          },
        },
      ],
      [
        'Fn::Join of values from functions',
        {
          BucketName: {
            'Fn::Join': ['', [{ Ref: 'Stage' }, { 'Fn::GetAtt': ['Jobs', 'Arn'] }, 7, { Ref: 'AWS::NoValue' }]],
          },
        },
      ],
      [
        'Fn::Select with a numeric string, a Ref or a Fn::FindInMap index',
        {
          Labels: {
            a: { 'Fn::Select': ['1', ['a', 'b']] },
            b: { 'Fn::Select': [{ Ref: 'Stage' }, { 'Fn::GetAZs': '' }] },
            c: { 'Fn::Select': [{ 'Fn::FindInMap': ['Sizes', 'prod', 'Days'] }, { Ref: 'Subnets' }] },
          },
        },
      ],
      [
        'Fn::Split of a value from a function',
        { SubnetIds: { 'Fn::Split': [',', { 'Fn::GetAtt': ['Jobs', 'QueueUrl'] }] } },
      ],
      ['a Fn::GetAtt attribute from a Ref', { BucketName: { 'Fn::GetAtt': ['Jobs', { Ref: 'Stage' }] } }],
    ])('accepts %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });
  });

  describe('objects that mix a function key with other keys', () => {
    it.each([
      [
        'a string property',
        { BucketName: { Ref: 'Stage', x: 1 } },
        at('BucketName'),
        /Ref must be the only key of its object, but it has x too/,
      ],
      [
        'a nested type',
        { Versioning: { 'Fn::If': ['IsProd', { Status: 'Enabled' }, { Ref: 'AWS::NoValue' }], Status: 'Enabled' } },
        at('Versioning'),
        /Fn::If must be the only key/,
      ],
      [
        'a list element',
        { SubnetIds: ['a', { 'Fn::Select': [0, ['b']], Extra: true }] },
        at('SubnetIds.1'),
        /Fn::Select must be the only key of its object, but it has Extra too/,
      ],
      [
        'a json-typed policy',
        { Policy: { Statement: [{ Resource: { 'Fn::GetAtt': ['Jobs', 'Arn'], Sid: 's' } }] } },
        at('Policy.Statement.0.Resource'),
        /Fn::GetAtt must be the only key/,
      ],
    ])('reports one in %s, instead of checking it as a plain object', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(path, message)]);
    });

    it('reports one as the whole of Properties, in an output and in Conditions', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Store: { Type: 'Fake::Store::Bucket', Properties: { 'Fn::If': ['IsProd', {}, {}], BucketName: 'b' } },
          },
          Conditions: {
            IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
            Either: { 'Fn::Or': [{ Condition: 'IsProd', Note: 'x' }, { Condition: 'IsProd' }] },
          },
          Outputs: { Url: { Value: { 'Fn::Sub': 'x', Ref: 'Stage' } } },
        },
      );
      expect(check(template)).toEqual([
        problem('Resources.Store.Properties', /Fn::If must be the only key of its object, but it has BucketName too/),
        problem('Conditions.Either.Fn::Or.0', /Condition must be the only key of its object, but it has Note too/),
        problem('Outputs.Url.Value', /Fn::Sub must be the only key of its object, but it has Ref too/),
      ]);
    });

    it('leaves a Condition key beside others alone outside Conditions, as in an IAM statement', () => {
      expect(
        check(
          withBucket({
            Policy: { Statement: [{ Effect: 'Allow', Condition: { Bool: { 'aws:SecureTransport': 'true' } } }] },
          }),
        ),
      ).toEqual([]);
    });
  });
});
