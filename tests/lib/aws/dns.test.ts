import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  InvalidChangeBatch,
  ListResourceRecordSetsCommand,
  NoSuchChange,
  Route53Client,
  ThrottlingException,
  type ChangeResourceRecordSetsResponse,
  type ListResourceRecordSetsResponse,
  type RRType,
} from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { OriginRecord } from '../../../lib/aws/dns';
import { FleetError, NotFoundError } from '../../../lib/core/errors';

const ZONE = 'Z0123456789ABCDEFGHIJ';
const CHANGE = '/change/C0000000000001';
const route53 = mockClient(Route53Client);
const origin = (type: 'A' | 'CNAME' = 'A'): OriginRecord =>
  new OriginRecord(new Route53Client({ region: 'us-west-2' }), {
    hostedZoneId: ZONE,
    recordName: 'origin.example.com',
    type,
    ttl: 60,
  });
const listed = (value: string, name = 'origin.example.com.', type: RRType = 'A'): ListResourceRecordSetsResponse => ({
  ResourceRecordSets: [{ Name: name, Type: type, TTL: 60, ResourceRecords: [{ Value: value }] }],
  IsTruncated: false,
  MaxItems: 1,
});
const changeInfo = (Status: 'PENDING' | 'INSYNC'): ChangeResourceRecordSetsResponse => ({
  ChangeInfo: { Id: CHANGE, Status, SubmittedAt: new Date(0) },
});
/** A clock that only the test's sleep moves. */
const fakeTime = (): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } => {
  let t = 0;
  const slept: number[] = [];
  return { now: () => t, sleep: (ms) => ((t += ms), slept.push(ms), Promise.resolve()), slept };
};

describe('OriginRecord', () => {
  beforeEach(() => route53.reset());
  afterAll(() => route53.restore());

  describe('upsert', () => {
    it('submits exactly one simple-routing UPSERT and returns the change id', async () => {
      route53.on(ChangeResourceRecordSetsCommand).resolves(changeInfo('PENDING'));
      await expect(origin().upsert('192.0.2.10')).resolves.toBe(CHANGE);
      expect(route53).toHaveReceivedCommandTimes(ChangeResourceRecordSetsCommand, 1);
      expect(route53.commandCalls(ChangeResourceRecordSetsCommand)[0]?.args[0].input).toEqual({
        HostedZoneId: ZONE,
        ChangeBatch: {
          Comment: 'queen-fleet failover',
          Changes: [
            {
              Action: 'UPSERT',
              ResourceRecordSet: {
                Name: 'origin.example.com',
                Type: 'A',
                TTL: 60,
                ResourceRecords: [{ Value: '192.0.2.10' }],
              },
            },
          ],
        },
      });
    });

    it('throws FleetError naming the call when Route 53 refuses the batch', async () => {
      route53
        .on(ChangeResourceRecordSetsCommand)
        .rejects(new InvalidChangeBatch({ message: 'bad batch', $metadata: { httpStatusCode: 400 } }));
      const error = await origin()
        .upsert('192.0.2.10')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FleetError);
      expect((error as FleetError).message).toMatch(/^Route 53 ChangeResourceRecordSets: InvalidChangeBatch/);
      expect((error as FleetError).cause).toBeInstanceOf(InvalidChangeBatch);
    });
  });

  describe('status', () => {
    it.each(['PENDING', 'INSYNC'] as const)('returns %s from GetChange', async (status) => {
      route53.on(GetChangeCommand, { Id: CHANGE }).resolves(changeInfo(status));
      await expect(origin().status(CHANGE)).resolves.toBe(status);
    });

    it('throws NotFoundError for an unknown change', async () => {
      route53
        .on(GetChangeCommand)
        .rejects(new NoSuchChange({ message: 'no such change', $metadata: { httpStatusCode: 404 } }));
      await expect(origin().status('/change/CNOPE')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('current', () => {
    it('lists from the record name and type and returns its first value', async () => {
      route53.on(ListResourceRecordSetsCommand).resolves(listed('192.0.2.10', 'ORIGIN.example.com.'));
      await expect(origin().current()).resolves.toBe('192.0.2.10');
      expect(route53).toHaveReceivedCommandWith(ListResourceRecordSetsCommand, {
        HostedZoneId: ZONE,
        StartRecordName: 'origin.example.com',
        StartRecordType: 'A',
      });
    });

    it.each([
      ['another name follows', listed('192.0.2.10', 'other.example.com.')],
      ['another type follows', listed('backend.example.com', 'origin.example.com.', 'CNAME')],
      [
        'the zone is empty',
        { ResourceRecordSets: [], IsTruncated: false, MaxItems: 1 } satisfies ListResourceRecordSetsResponse,
      ],
    ])('returns null when %s', async (_, out) => {
      route53.on(ListResourceRecordSetsCommand).resolves(out);
      await expect(origin().current()).resolves.toBeNull();
    });
  });

  describe('pointTo', () => {
    it('submits nothing when the record already points at the value', async () => {
      route53.on(ListResourceRecordSetsCommand).resolves(listed('192.0.2.10'));
      await expect(origin().pointTo('192.0.2.10', { timeoutMs: 1000, pollMs: 100, ...fakeTime() })).resolves.toEqual({
        changed: false,
        insync: true,
        changeId: null,
      });
      expect(route53).toHaveReceivedCommandTimes(ChangeResourceRecordSetsCommand, 0);
      expect(route53).toHaveReceivedCommandTimes(GetChangeCommand, 0);
    });

    it('compares a CNAME value as a DNS name', async () => {
      route53.on(ListResourceRecordSetsCommand).resolves(listed('Node-2.example.com.', 'origin.example.com.', 'CNAME'));
      await expect(
        origin('CNAME').pointTo('node-2.example.com', { timeoutMs: 1000, pollMs: 100, ...fakeTime() }),
      ).resolves.toMatchObject({ changed: false });
    });

    it('upserts and polls GetChange until INSYNC', async () => {
      const time = fakeTime();
      route53.on(ListResourceRecordSetsCommand).resolves(listed('192.0.2.10'));
      route53.on(ChangeResourceRecordSetsCommand).resolves(changeInfo('PENDING'));
      route53
        .on(GetChangeCommand)
        .resolvesOnce(changeInfo('PENDING'))
        .resolvesOnce(changeInfo('PENDING'))
        .resolves(changeInfo('INSYNC'));
      await expect(origin().pointTo('192.0.2.20', { timeoutMs: 10_000, pollMs: 500, ...time })).resolves.toEqual({
        changed: true,
        insync: true,
        changeId: CHANGE,
      });
      expect(route53).toHaveReceivedCommandTimes(GetChangeCommand, 3);
      expect(time.slept).toEqual([500, 500]);
    });

    it('keeps polling through a throttled GetChange', async () => {
      route53.on(ListResourceRecordSetsCommand).resolves({ ResourceRecordSets: [], IsTruncated: false, MaxItems: 1 });
      route53.on(ChangeResourceRecordSetsCommand).resolves(changeInfo('PENDING'));
      route53
        .on(GetChangeCommand)
        .rejectsOnce(new ThrottlingException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } }))
        .resolves(changeInfo('INSYNC'));
      await expect(
        origin().pointTo('192.0.2.20', { timeoutMs: 10_000, pollMs: 500, ...fakeTime() }),
      ).resolves.toMatchObject({ changed: true, insync: true });
    });

    it('returns insync: false when the change is still PENDING at the timeout', async () => {
      const time = fakeTime();
      route53.on(ListResourceRecordSetsCommand).resolves(listed('192.0.2.10'));
      route53.on(ChangeResourceRecordSetsCommand).resolves(changeInfo('PENDING'));
      route53.on(GetChangeCommand).resolves(changeInfo('PENDING'));
      await expect(origin().pointTo('192.0.2.20', { timeoutMs: 1200, pollMs: 500, ...time })).resolves.toEqual({
        changed: true,
        insync: false,
        changeId: CHANGE,
      });
      expect(time.slept).toEqual([500, 500, 200]);
    });

    it('throws FleetError when the record cannot be read, and changes nothing', async () => {
      route53
        .on(ListResourceRecordSetsCommand)
        .rejects(
          Object.assign(new Error('access denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
        );
      await expect(origin().pointTo('192.0.2.20', { timeoutMs: 1000, pollMs: 100, ...fakeTime() })).rejects.toThrow(
        /^Route 53 ListResourceRecordSets: AccessDenied: access denied$/,
      );
      expect(route53).toHaveReceivedCommandTimes(ChangeResourceRecordSetsCommand, 0);
    });
  });
});
