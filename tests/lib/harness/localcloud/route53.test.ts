import {
  ChangeResourceRecordSetsCommand,
  InvalidChangeBatch,
  ListResourceRecordSetsCommand,
  Route53Client,
  type Change,
} from '@aws-sdk/client-route-53';
import { OriginRecord } from '../../../../lib/aws/dns';
import { NotFoundError } from '../../../../lib/core/errors';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../../helpers/children';

describe('local cloud Route 53 fake (child process)', () => {
  let cloud: LocalCloudInfo;
  const client = (): Route53Client =>
    new Route53Client({
      region: cloud.region,
      endpoint: cloud.endpoint,
      maxAttempts: 1,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  // A zone per test: the fake accepts any id, so tests cannot see each other's records.
  const origin = (zone: string, type: 'A' | 'CNAME' = 'A'): OriginRecord =>
    new OriginRecord(client(), {
      hostedZoneId: `/hostedzone/${zone}`,
      recordName: 'origin.example.com',
      type,
      ttl: 60,
    });
  const change = (zone: string, ...changes: Change[]): Promise<unknown> =>
    client().send(new ChangeResourceRecordSetsCommand({ HostedZoneId: zone, ChangeBatch: { Changes: changes } }));
  const simple = (Action: Change['Action'], Name: string, Value: string): Change => ({
    Action,
    ResourceRecordSet: { Name, Type: 'A', TTL: 60, ResourceRecords: [{ Value }] },
  });

  beforeAll(async () => {
    // Route 53's 60 s of PENDING (docs/aws-behaviour.md) becomes 100 ms.
    cloud = await startCloudProcess(['--time-scale', '600']);
  });
  afterAll(() => killAll());

  it('upserts a record that current() then reads back', async () => {
    const record = origin('ZUPSERT');
    await expect(record.current()).resolves.toBeNull();
    await expect(record.upsert('192.0.2.10')).resolves.toMatch(/^\/change\/C[A-Z2-7]{13}$/);
    await expect(record.current()).resolves.toBe('192.0.2.10');
    await record.upsert('192.0.2.20');
    await expect(record.current()).resolves.toBe('192.0.2.20');
  });

  it('reports a change PENDING until it has propagated, then INSYNC', async () => {
    const record = origin('ZSTATUS');
    const id = await record.upsert('192.0.2.10');
    await expect(record.status(id)).resolves.toBe('PENDING');
    await expect(record.status(id)).resolves.toBe('PENDING');
    await new Promise((r) => setTimeout(r, 150));
    await expect(record.status(id)).resolves.toBe('INSYNC');
    await expect(record.status(id)).resolves.toBe('INSYNC');
  });

  it('answers 404 NoSuchChange for an unknown change id', async () => {
    await expect(origin('ZSTATUS').status('/change/CNOSUCHCHANGE01')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses a second CREATE of the same record with InvalidChangeBatch, and a DELETE of a missing one', async () => {
    await change('ZCREATE', simple('CREATE', 'origin.example.com', '192.0.2.10'));
    const second = change('ZCREATE', simple('CREATE', 'Origin.Example.com.', '192.0.2.11'));
    await expect(second).rejects.toBeInstanceOf(InvalidChangeBatch);
    await expect(second).rejects.toMatchObject({
      $metadata: { httpStatusCode: 400 },
      message: expect.stringContaining("name='origin.example.com.', type='A'") as unknown,
    });
    await expect(change('ZCREATE', simple('DELETE', 'missing.example.com', '192.0.2.10'))).rejects.toBeInstanceOf(
      InvalidChangeBatch,
    );
    await expect(origin('ZCREATE').current()).resolves.toBe('192.0.2.10');
  });

  it('applies a batch all or nothing', async () => {
    const batch = change(
      'ZBATCH',
      simple('CREATE', 'a.example.com', '192.0.2.1'),
      simple('DELETE', 'missing.example.com', '192.0.2.2'),
    );
    await expect(batch).rejects.toBeInstanceOf(InvalidChangeBatch);
    const out = await client().send(new ListResourceRecordSetsCommand({ HostedZoneId: 'ZBATCH' }));
    expect(out.ResourceRecordSets).toEqual([]);
  });

  it('lists record sets in DNS order from the start name, with the next name when truncated', async () => {
    await change(
      'ZLIST',
      simple('CREATE', 'b.example.com', '192.0.2.2'),
      simple('CREATE', 'a.example.com', '192.0.2.1'),
      simple('CREATE', 'a.b.example.com', '192.0.2.3'),
    );
    const out = await client().send(
      new ListResourceRecordSetsCommand({ HostedZoneId: 'ZLIST', StartRecordName: 'a.example.com', MaxItems: 2 }),
    );
    expect(out.ResourceRecordSets?.map((s) => s.Name)).toEqual(['a.example.com.', 'b.example.com.']);
    expect(out).toMatchObject({
      IsTruncated: true,
      NextRecordName: 'a.b.example.com.',
      NextRecordType: 'A',
      MaxItems: 2,
    });
  });

  it('returns null from current() when only another record follows the name', async () => {
    await change('ZOTHER', simple('CREATE', 'zzz.example.com', '192.0.2.9'));
    await expect(origin('ZOTHER').current()).resolves.toBeNull();
  });

  it('makes pointTo idempotent: a second call submits nothing', async () => {
    const record = origin('ZPOINT');
    await expect(record.pointTo('192.0.2.20', { timeoutMs: 5000, pollMs: 20 })).resolves.toEqual({
      changed: true,
      insync: true,
      changeId: expect.stringMatching(/^\/change\/C/) as unknown,
    });
    await expect(record.pointTo('192.0.2.20', { timeoutMs: 5000, pollMs: 20 })).resolves.toEqual({
      changed: false,
      insync: true,
      changeId: null,
    });
    await expect(record.current()).resolves.toBe('192.0.2.20');
  });

  it('moves a CNAME and refuses a hostname in an A record', async () => {
    const cname = origin('ZCNAME', 'CNAME');
    await expect(cname.pointTo('node-2.example.com', { timeoutMs: 5000, pollMs: 20 })).resolves.toMatchObject({
      changed: true,
      insync: true,
    });
    await expect(cname.current()).resolves.toBe('node-2.example.com');
    await expect(origin('ZBADA').upsert('node-2.example.com')).rejects.toThrow(
      /Route 53 ChangeResourceRecordSets: InvalidChangeBatch/,
    );
  });
});
