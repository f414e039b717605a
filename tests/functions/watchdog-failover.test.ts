import { DynamoDBServiceException, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetInstanceStateCommand } from '@aws-sdk/client-lightsail';
import { ChangeResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { PublishCommand } from '@aws-sdk/client-sns';
import { DescribeInstanceInformationCommand, SendCommandCommand } from '@aws-sdk/client-ssm';
import { handler, resetForTests } from '../../functions/watchdog/handler';
import type { FleetEvent } from '../../lib/core/events';
import { emptyCounter } from '../../lib/core/fleet/stall';
import { working } from '../helpers/fixtures';
import { heartbeat } from '../helpers/fixtures';
import { answerControlPlane, mockControlPlane, routedFleetEnv } from '../helpers/control-plane';
import { MemoryS3 } from '../helpers/memory-s3';

const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

const cp = mockControlPlane();
const { ssm, sns, r53, lightsail } = cp;
let s3: MemoryS3;

const kinds = (): string[] =>
  sns.commandCalls(PublishCommand).map((c) => (JSON.parse(c.args[0].input.Message ?? '{}') as FleetEvent).kind);
const commands = (): string[] =>
  ssm
    .commandCalls(SendCommandCommand)
    .map((c) => `${c.args[0].input.InstanceIds?.[0] ?? ''} ${c.args[0].input.Parameters?.commands?.[0] ?? ''}`);

describe('watchdog handler: failover', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    answerControlPlane(cp, {
      instance: 'stopped',
      ping: [{ InstanceId: 'mi-00000000000000001', PingStatus: 'ConnectionLost' }],
    });
    s3 = new MemoryS3();
    Object.assign(process.env, {
      ...routedFleetEnv(),
    });
    resetForTests();
    s3.set('peer-sync/leader.json', {
      version: 1,
      primary: 'node-1',
      epoch: 7,
      renewals: 40,
      reason: 't',
      changedBy: 't',
      previous: null,
      handover: 'immediate',
    });
    // node-1 last renewed 100 s ago (by the watchdog's own record); node-2 reports fresh samples.
    const node1 = heartbeat('node-1', working(0, 9));
    s3.set('peer-sync/nodes/node-1/heartbeat.json', node1);
    s3.set('peer-sync/nodes/node-2/heartbeat.json', {
      ...heartbeat(
        'node-2',
        working(0, 9).map((s) => ({ ...s, epochSeen: 7, consumingEpoch: null })),
      ),
      role: 'standby',
    });
    const quiet = { counter: emptyCounter(), incident: null, restartTimes: [], rejoinTimes: [], incidents: 0 };
    // The lease has not changed for 100 s by the watchdog's clock, which judged 30 s ago.
    const now = Date.now();
    s3.set('peer-sync/watchdog/state.json', {
      version: 2,
      revision: 3,
      lastFailoverAt: null,
      judgedAt: now - 30_000,
      lease: { primary: 'node-1', epoch: 7, renewals: 40, changedAt: now - 100_000 },
      nodes: {
        'node-1': { ...quiet, newest: { boot: 'boot-1', seq: 8, changedAt: now - 40_000 } },
        'node-2': { ...quiet, newest: { boot: 'boot-1', seq: 7, changedAt: now - 10_000 } },
      },
    });
  });
  afterAll(() => {
    process.env = saved;
    for (const m of [...cp.all, s3]) m.restore();
  });

  it('promotes the standby of a confirmed-dead primary, starts its worker and moves the record', async () => {
    await handler(scheduled);
    expect(s3.json('peer-sync/leader.json')).toMatchObject({
      primary: 'node-2',
      epoch: 8,
      previous: 'node-1',
      handover: 'immediate',
      changedBy: 'watchdog',
    });
    expect(r53).toHaveReceivedCommandTimes(ChangeResourceRecordSetsCommand, 1);
    expect(r53).toHaveReceivedCommandWith(ChangeResourceRecordSetsCommand, {
      HostedZoneId: 'ZTEST',
      ChangeBatch: {
        Comment: 'queen-fleet failover',
        Changes: [
          {
            Action: 'UPSERT',
            ResourceRecordSet: {
              Name: 'origin.example.com',
              Type: 'A',
              TTL: 60,
              ResourceRecords: [{ Value: '192.0.2.2' }],
            },
          },
        ],
      },
    });
    expect(commands()).toEqual(['mi-00000000000000002 systemctl start queen-fleet-worker']);
    expect(kinds()).toEqual(['NODE_DEAD', 'FAILOVER_STARTED', 'PROMOTED', 'RECORD_CHANGED']);
    expect(
      (s3.json('peer-sync/watchdog/state.json') as { lastFailoverAt: number | null }).lastFailoverAt,
    ).not.toBeNull();
  });

  it('does nothing twice when invoked again, or many times at once, for the same incident', async () => {
    await Promise.all([handler(scheduled), handler(scheduled), handler(scheduled)]);
    await handler(scheduled);
    expect(s3.puts.filter((p) => p.key === 'peer-sync/leader.json')).toHaveLength(1);
    expect(r53).toHaveReceivedCommandTimes(ChangeResourceRecordSetsCommand, 1);
    expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
    expect(kinds().filter((k) => k === 'PROMOTED')).toHaveLength(1);
  });

  it('alerts, and does not fail over, a silent primary it cannot confirm gone: the lease decides', async () => {
    lightsail.on(GetInstanceStateCommand).rejects(new Error('throttled'));
    ssm.on(DescribeInstanceInformationCommand).rejects(new Error('throttled'));
    await handler(scheduled);
    expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-1', epoch: 7 });
    expect(kinds()).toEqual(['NODE_SILENT']);
  });

  it(
    'does not take a crashed VM that Lightsail still calls running, ' + 'with SSM still online, for a dead agent',
    async () => {
      lightsail.on(GetInstanceStateCommand).resolves({ state: { name: 'running' } });
      ssm
        .on(DescribeInstanceInformationCommand)
        .resolves({ InstanceInformationList: [{ InstanceId: 'mi-00000000000000001', PingStatus: 'Online' }] });
      await handler(scheduled);
      expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-1', epoch: 7 });
      expect(kinds()).toEqual(['NODE_SILENT']);
      expect(commands()).toEqual([]);
    },
  );

  it('does not confirm a primary gone while Lightsail says stopping: its services may still run', async () => {
    lightsail.on(GetInstanceStateCommand).resolves({ state: { name: 'stopping' } });
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolves({ InstanceInformationList: [{ InstanceId: 'mi-00000000000000001', PingStatus: 'Online' }] });
    await handler(scheduled);
    expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-1', epoch: 7 });
    expect(kinds()).toEqual(['NODE_SILENT']);
  });

  it('hands over only after the lease lapses when the old primary is not confirmed stopped', async () => {
    lightsail.on(GetInstanceStateCommand).resolves({ state: { name: 'running' } });
    await handler(scheduled);
    expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-2', epoch: 8, handover: 'await-fence' });
  });

  it('fails a run that cannot read the role, and judges no silence in the first run that gets through', async () => {
    lightsail.on(GetInstanceStateCommand).resolves({ state: { name: 'running' } });
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolves({ InstanceInformationList: [{ InstanceId: 'mi-00000000000000001', PingStatus: 'Online' }] });
    // The lease is in the control table: DynamoDB answers 503 to every read of it (and only of it).
    const down = new DynamoDBServiceException({
      name: 'ServiceUnavailable',
      $fault: 'server',
      $metadata: { httpStatusCode: 503 },
      message: 'down',
    });
    s3.table.on(GetItemCommand, { Key: { k: { S: 'leader.json' } } }).rejects(down);
    await expect(handler(scheduled)).rejects.toThrow(/leader\.json/);
    s3.table.reset();
    s3.install();
    // The table is back, the heartbeats are as stale as the outage left them: still no verdict on silence.
    await handler(scheduled);
    expect(kinds()).toEqual([]);
  });
});
