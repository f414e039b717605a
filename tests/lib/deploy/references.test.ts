import { check, problem, withBucket } from './fake-spec';

describe('checkTemplate', () => {
  describe('references', () => {
    const at = (path: string): string => `Resources.Store.Properties.${path}`;

    it.each([
      [
        'a dangling Ref',
        { BucketName: { Ref: 'Gone' } },
        at('BucketName.Ref'),
        /no resource, parameter or pseudo parameter named Gone/,
      ],
      [
        'a dangling Ref inside a json-typed policy',
        { Policy: { Statement: [{ Resource: { Ref: 'Gone' } }] } },
        at('Policy.Statement.0.Resource.Ref'),
        /named Gone/,
      ],
      [
        'Fn::GetAtt to a missing resource',
        { BucketName: { 'Fn::GetAtt': ['Gone', 'Arn'] } },
        at('BucketName.Fn::GetAtt'),
        /no resource named Gone/,
      ],
      [
        'Fn::GetAtt "A.B" to a missing resource',
        { BucketName: { 'Fn::GetAtt': 'Gone.Arn' } },
        at('BucketName.Fn::GetAtt'),
        /no resource named Gone/,
      ],
      [
        'Fn::GetAtt to an attribute the type lacks',
        { BucketName: { 'Fn::GetAtt': ['Jobs', 'Url'] } },
        at('BucketName.Fn::GetAtt'),
        /Jobs \(Fake::Queue::Queue\) has no attribute Url/,
      ],
      [
        'Fn::GetAtt "A.B" to an attribute the type lacks',
        { BucketName: { 'Fn::GetAtt': 'Jobs.Url' } },
        at('BucketName.Fn::GetAtt'),
        /has no attribute Url/,
      ],
      [
        'a dangling ${Name} in Fn::Sub',
        { BucketName: { 'Fn::Sub': 'b-${Stage}-${Gone}' } },
        at('BucketName.Fn::Sub'),
        /\$\{Gone\}: no resource, parameter or pseudo parameter named Gone/,
      ],
      [
        'a ${Name.Attr} in Fn::Sub the type lacks',
        { BucketName: { 'Fn::Sub': '${Jobs.Url}' } },
        at('BucketName.Fn::Sub'),
        /\$\{Jobs.Url\}: .*has no attribute Url/,
      ],
      [
        'a dangling Ref in a Fn::Sub variable',
        { BucketName: { 'Fn::Sub': ['${X}', { X: { Ref: 'Gone' } }] } },
        at('BucketName.Fn::Sub.1.X.Ref'),
        /named Gone/,
      ],
      [
        'a missing condition in Fn::If',
        { BucketName: { 'Fn::If': ['IsDev', 'a', 'b'] } },
        at('BucketName.Fn::If.0'),
        /no condition named IsDev/,
      ],
      ['a malformed Fn::If', { BucketName: { 'Fn::If': ['IsProd', 'a'] } }, at('BucketName.Fn::If'), /Fn::If takes/],
      [
        'a missing mapping key',
        { BucketName: { 'Fn::FindInMap': ['Sizes', 'dev', 'Days'] } },
        at('BucketName.Fn::FindInMap.1'),
        /mapping Sizes has no key dev/,
      ],
    ])('reports %s', (_name, properties, path, message) => {
      expect(check(withBucket(properties))).toEqual([problem(path, message)]);
    });

    it.each([
      [
        'pseudo parameters',
        {
          BucketName: {
            'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, { Ref: 'AWS::Region' }, { Ref: 'AWS::URLSuffix' }]],
          },
        },
      ],
      [
        'escaped ${!Literal} and pseudo parameters in Fn::Sub',
        { BucketName: { 'Fn::Sub': '${!Literal}-${AWS::AccountId}-${Jobs.Arn}' } },
      ],
      [
        'names defined by the Fn::Sub variable map',
        { BucketName: { 'Fn::Sub': ['${Prefix}-${Queue.Url}', { Prefix: 'p', 'Queue.Url': 'u' }] } },
      ],
    ])('resolves %s', (_name, properties) => {
      expect(check(withBucket(properties))).toEqual([]);
    });

    it('resolves a dotted attribute', () => {
      // Read from an output: a resource that reads its own attribute depends on itself.
      expect(
        check(withBucket({}, { Outputs: { Address: { Value: { 'Fn::GetAtt': 'Store.Endpoint.Address' } } } })),
      ).toEqual([]);
    });

    it('checks DependsOn targets in both forms', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Store: { Type: 'Fake::Store::Bucket', DependsOn: 'Nowhere' },
            Jobs: { Type: 'Fake::Queue::Queue', DependsOn: ['Store', 'Jobs', 'Elsewhere'] },
          },
        },
      );
      expect(check(template)).toEqual([
        problem('Resources.Store.DependsOn', /DependsOn Nowhere: no resource/),
        problem('Resources.Jobs.DependsOn.1', /cannot depend on itself/),
        problem('Resources.Jobs.DependsOn.2', /DependsOn Elsewhere: no resource/),
      ]);
    });

    it('checks Condition names on resources and outputs', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Store: { Type: 'Fake::Store::Bucket', Condition: 'IsDev' },
            Jobs: { Type: 'Fake::Queue::Queue', Condition: 'IsProd' },
          },
          Outputs: { Name: { Value: { Ref: 'Store' }, Condition: 'IsStaging' } },
        },
      );
      expect(check(template)).toEqual([
        problem('Resources.Store.Condition', /no condition named IsDev/),
        problem('Outputs.Name.Condition', /no condition named IsStaging/),
      ]);
    });

    it('checks references in Outputs, Metadata and Conditions', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Store: { Type: 'Fake::Store::Bucket', Metadata: { Source: { Ref: 'Gone' } } },
            Jobs: { Type: 'Fake::Queue::Queue' },
          },
          Conditions: {
            IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
            HasJobs: { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'Jobs' }, ''] }] },
            Both: { 'Fn::And': [{ Condition: 'IsProd' }, { Condition: 'IsDev' }] },
            Literal: 'true',
          },
          Outputs: {
            Url: { Value: { 'Fn::GetAtt': ['Jobs', 'Url'] }, Export: { Name: { 'Fn::Sub': '${Missing}-url' } } },
          },
        },
      );
      expect(check(template)).toEqual([
        problem('Resources.Store.Metadata.Source.Ref', /named Gone/),
        problem(
          'Conditions.HasJobs.Fn::Not.0.Fn::Equals.0.Ref',
          /Conditions can only Ref parameters, not resource Jobs/,
        ),
        problem('Conditions.Both.Fn::And.1.Condition', /no condition named IsDev/),
        problem('Conditions.Literal', /a condition must be/),
        problem('Outputs.Url.Value.Fn::GetAtt', /has no attribute Url/),
        problem('Outputs.Url.Export.Name.Fn::Sub', /\$\{Missing\}/),
      ]);
    });
  });
});
