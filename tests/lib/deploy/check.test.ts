import { summarizeTemplate } from '../../../lib/deploy/check';
import { check, problem, withBucket } from './fake-spec';

describe('checkTemplate', () => {
  describe('template shape', () => {
    it('passes a well-formed template', () => {
      expect(check(withBucket({ BucketName: 'b', Versioning: { Status: 'Enabled' } }))).toEqual([]);
    });

    it.each([
      ['a template that is not an object', [], problem('(root)', /JSON object/)],
      ['a template without Resources', { Outputs: {} }, problem('Resources', /needs a Resources section/)],
      ['an empty Resources section', { Resources: {} }, problem('Resources', /at least one resource/)],
      [
        'an unknown top-level section',
        { Resource: {}, Resources: { Jobs: { Type: 'Fake::Queue::Queue' } } },
        problem('Resource', /unknown template section/),
      ],
      [
        'a Parameters section that is a list',
        { Parameters: [], Resources: { Jobs: { Type: 'Fake::Queue::Queue' } } },
        problem('Parameters', /must be an object/),
      ],
      [
        'a resource without a Type',
        { Resources: { Jobs: { Properties: {} } } },
        problem('Resources.Jobs.Type', /needs a Type/),
      ],
      [
        'an unknown resource attribute',
        { Resources: { Jobs: { Type: 'Fake::Queue::Queue', Propertis: {} } } },
        problem('Resources.Jobs.Propertis', /unknown resource attribute/),
      ],
      [
        'a DeletionPolicy that does not exist',
        { Resources: { Jobs: { Type: 'Fake::Queue::Queue', DeletionPolicy: 'Keep' } } },
        problem('Resources.Jobs.DeletionPolicy', /must be one of Delete, Retain/),
      ],
      [
        'an output without a Value',
        { Resources: { Jobs: { Type: 'Fake::Queue::Queue' } }, Outputs: { Url: { Description: 'd' } } },
        problem('Outputs.Url.Value', /needs a Value/),
      ],
    ])('reports %s', (_name, template, expected) => {
      expect(check(template)).toEqual([expected]);
    });
  });

  describe('resource types', () => {
    it('reports a type the spec does not know', () => {
      expect(check({ Resources: { Jobs: { Type: 'Fake::Queue::Queu' } } })).toEqual([
        problem('Resources.Jobs.Type', /unknown resource type Fake::Queue::Queu/),
      ]);
    });

    it.each(['Custom::Seeder', 'AWS::CloudFormation::CustomResource'])(
      'lets %s take any properties and return any attribute',
      (type) => {
        const template = {
          Resources: {
            Seed: { Type: type, Properties: { ServiceToken: 'arn:aws:lambda:x', Whatever: { Deep: [1] } } },
            Store: { Type: 'Fake::Store::Bucket', Properties: { BucketName: { 'Fn::GetAtt': ['Seed', 'Anything'] } } },
          },
        };
        expect(check(template)).toEqual([]);
      },
    );

    it('still wants a ServiceToken on a custom resource', () => {
      expect(check({ Resources: { Seed: { Type: 'Custom::Seeder', Properties: {} } } })).toEqual([
        problem('Resources.Seed.Properties.ServiceToken', /missing required/),
      ]);
    });
  });

  describe('summarizeTemplate', () => {
    it('counts resources and distinct types', () => {
      expect(
        summarizeTemplate({ Resources: { A: { Type: 'X::Y::Z' }, B: { Type: 'X::Y::Z' }, C: { Type: 'X::Y::W' } } }),
      ).toEqual({ resources: 3, types: 2 });
    });
  });
});
