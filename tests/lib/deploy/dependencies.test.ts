import { check, problem, withBucket } from './fake-spec';

/** A template of fake queues named by `resources`; each test wires them together. */
const queues = (resources: Record<string, Record<string, unknown>>, extra: Record<string, unknown> = {}): unknown => ({
  Conditions: {
    IsProd: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
    IsBig: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-west-2'] },
  },
  Resources: Object.fromEntries(Object.entries(resources).map(([id, r]) => [id, { Type: 'Fake::Queue::Queue', ...r }])),
  ...extra,
});
const named = (value: unknown): Record<string, unknown> => ({ Properties: { QueueName: value } });

describe('checkTemplate', () => {
  describe('dependency cycles', () => {
    it('reports a permission that reads the bucket Arn while the bucket depends on the permission', () => {
      const template = withBucket(
        {},
        {
          Resources: {
            Store: { Type: 'Fake::Store::Bucket', DependsOn: 'Permission' },
            Handler: { Type: 'Fake::Compute::Function', Properties: { Handler: 'index.handler' } },
            Permission: {
              Type: 'Fake::Compute::Permission',
              Properties: {
                FunctionName: { 'Fn::GetAtt': ['Handler', 'Arn'] },
                SourceArn: { 'Fn::GetAtt': 'Store.Arn' },
              },
            },
          },
        },
      );
      expect(check(template)).toEqual([problem('Resources.Store', /^dependency cycle Store → Permission → Store$/)]);
    });

    it('follows Ref, Fn::GetAtt, Fn::Sub placeholders and Fn::If branches', () => {
      const template = queues({
        A: named({ Ref: 'B' }),
        B: named({ 'Fn::Sub': 'b-${C}' }),
        C: named({ 'Fn::If': ['IsProd', { 'Fn::Sub': '${D.Arn}' }, 'c'] }),
        D: named({ 'Fn::GetAtt': ['A', 'Arn'] }),
      });
      expect(check(template)).toEqual([problem('Resources.A', /^dependency cycle A → B → C → D → A$/)]);
    });

    it('reports a resource that refers to itself', () => {
      expect(check(withBucket({ BucketName: { 'Fn::Sub': '${Store.Arn}-copy' } }))).toEqual([
        problem('Resources.Store', /^dependency cycle Store → Store$/),
      ]);
    });

    it('reports each cycle once, from its first member in template order', () => {
      const template = queues({ A: { DependsOn: ['B', 'C'] }, B: named({ Ref: 'A' }), C: named({ Ref: 'A' }) });
      expect(check(template)).toEqual([
        problem('Resources.A', /^dependency cycle A → B → A$/),
        problem('Resources.A', /^dependency cycle A → C → A$/),
      ]);
    });

    it('stops listing after 20 cycles', () => {
      const ids = ['A', 'B', 'C', 'D', 'E', 'F'];
      const template = queues(
        Object.fromEntries(ids.map((id) => [id, { DependsOn: ids.filter((other) => other !== id) }])),
      );
      const problems = check(template);
      expect(problems).toHaveLength(20);
      expect(new Set(problems.map((p) => p.message)).size).toBe(20);
      expect(problems.every((p) => p.message.startsWith('dependency cycle A → '))).toBe(true);
    });

    it.each([
      [
        'a chain and a diamond',
        { A: { DependsOn: ['B', 'C'] }, B: named({ Ref: 'D' }), C: named({ 'Fn::GetAtt': ['D', 'Arn'] }), D: {} },
      ],
      ['a Fn::Sub name its variable map defines', { A: named({ 'Fn::Sub': ['${A}', { A: 'x' }] }) }],
      ['a Fn::Sub placeholder for a pseudo parameter', { A: named({ 'Fn::Sub': '${AWS::StackName}-${AWS::Region}' }) }],
    ])('accepts %s', (_name, resources) => {
      expect(check(queues(resources))).toEqual([]);
    });

    it('reports a resource that depends on itself once, not as a cycle too', () => {
      expect(check(queues({ A: { DependsOn: 'A' } }))).toEqual([
        problem('Resources.A.DependsOn', /A cannot depend on itself/),
      ]);
    });
  });

  describe('uses of a conditional resource', () => {
    const prod = { Condition: 'IsProd' };

    it.each([
      [
        'a Ref',
        named({ Ref: 'Extra' }),
        'Resources.A.Properties.QueueName.Ref',
        new RegExp(
          /^Extra exists only when condition IsProd is true, but A has no Condition /.source +
            /and this Ref is outside Fn::If \[IsProd, …\]: the deploy fails when IsProd is false$/.source,
        ),
      ],
      [
        'a Fn::GetAtt',
        named({ 'Fn::GetAtt': 'Extra.Arn' }),
        'Resources.A.Properties.QueueName.Fn::GetAtt',
        /this Fn::GetAtt is outside Fn::If \[IsProd, …\]/,
      ],
      [
        'a Fn::Sub placeholder',
        named({ 'Fn::Sub': '${Extra.QueueUrl}' }),
        'Resources.A.Properties.QueueName.Fn::Sub',
        /this Fn::Sub is outside Fn::If/,
      ],
      [
        'a DependsOn',
        { DependsOn: ['Extra'] },
        'Resources.A.DependsOn.0',
        new RegExp(
          /^Extra exists only when condition IsProd is true, /.source +
            /but A has no Condition: the deploy fails when IsProd is false$/.source,
        ),
      ],
      [
        'the false branch of Fn::If on its condition',
        named({ 'Fn::If': ['IsProd', 'a', { Ref: 'Extra' }] }),
        'Resources.A.Properties.QueueName.Fn::If.2.Ref',
        /Extra exists only when condition IsProd/,
      ],
      [
        'Fn::If on another condition',
        named({ 'Fn::If': ['IsBig', { Ref: 'Extra' }, 'a'] }),
        'Resources.A.Properties.QueueName.Fn::If.1.Ref',
        /outside Fn::If \[IsProd, …\]/,
      ],
      [
        'a resource with another condition',
        { Condition: 'IsBig', ...named({ Ref: 'Extra' }) },
        'Resources.A.Properties.QueueName.Ref',
        /but A has Condition IsBig and this Ref/,
      ],
    ])('reports one through %s', (_name, user, path, message) => {
      expect(check(queues({ Extra: prod, A: user }))).toEqual([problem(path, message)]);
    });

    it('reports one from an output', () => {
      const template = queues(
        { Extra: prod },
        { Outputs: { Url: { Value: { 'Fn::GetAtt': ['Extra', 'QueueUrl'] } } } },
      );
      expect(check(template)).toEqual([
        problem(
          'Outputs.Url.Value.Fn::GetAtt',
          /Extra exists only when condition IsProd is true, but output Url has no Condition/,
        ),
      ]);
    });

    it('reports a Fn::Sub that names the resource twice once', () => {
      expect(check(queues({ Extra: prod, A: named({ 'Fn::Sub': '${Extra}-${Extra.Arn}' }) }))).toHaveLength(1);
    });

    it.each([
      ['a resource with the same condition', { ...prod, ...named({ Ref: 'Extra' }), DependsOn: 'Extra' }],
      [
        'the true branch of Fn::If on its condition',
        named({ 'Fn::If': ['IsProd', { 'Fn::GetAtt': ['Extra', 'Arn'] }, { Ref: 'AWS::NoValue' }] }),
      ],
      [
        'a nested Fn::If inside that true branch',
        named({ 'Fn::If': ['IsProd', { 'Fn::If': ['IsBig', { 'Fn::Sub': '${Extra}' }, 'b'] }, 'a'] }),
      ],
      [
        'an Fn::If on its condition inside one on another',
        named({ 'Fn::If': ['IsBig', { 'Fn::If': ['IsProd', { Ref: 'Extra' }, 'a'] }, 'b'] }),
      ],
    ])('accepts a use from %s', (_name, user) => {
      expect(check(queues({ Extra: prod, A: user }))).toEqual([]);
    });

    it('accepts a use from a resource whose condition is an Fn::And that includes the needed one', () => {
      const both = { 'Fn::And': [{ Condition: 'IsProd' }, { Condition: 'IsBig' }] };
      const deeper = { 'Fn::And': [{ Condition: 'Both' }, { 'Fn::Equals': ['a', 'a'] }] };
      const template = queues({ Extra: prod, A: { Condition: 'Deeper', ...named({ Ref: 'Extra' }) } });
      const conditions = { ...(template as { Conditions: object }).Conditions, Both: both, Deeper: deeper };
      expect(check({ ...(template as object), Conditions: conditions })).toEqual([]);
      // An Fn::Or, or an Fn::And without it, proves nothing.
      const either = { ...conditions, Deeper: { 'Fn::Or': [{ Condition: 'IsProd' }, { Condition: 'IsBig' }] } };
      const refused = problem('Resources.A.Properties.QueueName.Ref', /but A has Condition Deeper/);
      expect(check({ ...(template as object), Conditions: either })).toEqual([refused]);
    });

    it('accepts a use from an output with the same condition', () => {
      const template = queues({ Extra: prod }, { Outputs: { Url: { Condition: 'IsProd', Value: { Ref: 'Extra' } } } });
      expect(check(template)).toEqual([]);
    });
  });
});
