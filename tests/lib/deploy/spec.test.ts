import { emptyDatabase, type SpecDatabase } from '@aws-cdk/service-spec-types';
import { SpecLoadError, createSpecLookup } from '../../../lib/deploy/spec';

/** A one-resource database: a bucket with a nested, self-referencing Rule type and tags. */
const tinyDatabase = (): SpecDatabase => {
  const db = emptyDatabase();
  db.store('typeDefinition', {
    $id: 'rule-1',
    name: 'Rule',
    properties: {
      Id: { type: { type: 'string' }, required: true },
      Next: { type: { type: 'ref', reference: { $ref: 'rule-1' } } },
    },
  });
  db.allocate('resource', {
    name: 'Bucket',
    cloudFormationType: 'Fake::Store::Bucket',
    properties: {
      Tier: { type: { type: 'string', allowedValues: ['HOT', 'COLD'] }, required: true },
      Rules: { type: { type: 'array', element: { type: 'ref', reference: { $ref: 'rule-1' } } } },
      Tags: { type: { type: 'array', element: { type: 'tag' } } },
      Policy: { type: { type: 'union', types: [{ type: 'json' }, { type: 'string' }] } },
    },
    attributes: { Arn: { type: { type: 'string' } }, 'Endpoint.Address': { type: { type: 'string' } } },
  });
  return db;
};

describe('createSpecLookup', () => {
  it('converts properties, required flags, allowed values and attributes', () => {
    const spec = createSpecLookup(tinyDatabase).resource('Fake::Store::Bucket');
    expect(spec?.properties).toEqual({
      Tier: { type: { kind: 'string', allowedValues: ['HOT', 'COLD'] }, required: true },
      Rules: { type: { kind: 'array', element: { kind: 'object', definition: 'Rule' } }, required: false },
      Tags: { type: { kind: 'array', element: { kind: 'object', definition: 'Tag' } }, required: false },
      Policy: { type: { kind: 'union', types: [{ kind: 'json' }, { kind: 'string' }] }, required: false },
    });
    expect([...(spec?.attributes ?? [])]).toEqual(['Arn', 'Endpoint.Address']);
  });

  it('follows nested type definitions, including one that refers to itself', () => {
    const definitions = createSpecLookup(tinyDatabase).resource('Fake::Store::Bucket')?.definitions;
    expect(definitions?.Rule).toEqual({
      Id: { type: { kind: 'string' }, required: true },
      Next: { type: { kind: 'object', definition: 'Rule' }, required: false },
    });
  });

  it('gives the legacy tag type a required Key and Value', () => {
    const definitions = createSpecLookup(tinyDatabase).resource('Fake::Store::Bucket')?.definitions;
    expect(definitions?.Tag).toEqual({
      Key: { type: { kind: 'string' }, required: true },
      Value: { type: { kind: 'string' }, required: true },
    });
  });

  it('returns undefined for a type the database does not hold', () => {
    expect(createSpecLookup(tinyDatabase).resource('Fake::Store::Bucke')).toBeUndefined();
  });

  it('loads the database on the first lookup only and converts each type once', () => {
    const load = jest.fn(tinyDatabase);
    const lookup = createSpecLookup(load);
    expect(load).not.toHaveBeenCalled();
    const first = lookup.resource('Fake::Store::Bucket');
    lookup.resource('Fake::Other::Thing');
    expect(lookup.resource('Fake::Store::Bucket')).toBe(first);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('throws SpecLoadError, with the cause, when the database cannot be read', () => {
    const cause = new Error('ENOENT db.json.gz');
    const lookup = createSpecLookup(() => {
      throw cause;
    });
    expect(() => lookup.resource('AWS::S3::Bucket')).toThrow(SpecLoadError);
    expect(() => lookup.resource('AWS::S3::Bucket')).toThrow(expect.objectContaining({ cause }) as Error);
  });
});
