import { GetInstanceStateCommand, LightsailClient } from '@aws-sdk/client-lightsail';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type InstanceInformation,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { InstanceProbe } from '../../../lib/aws/instances';
import { ManagedInstances } from '../../../lib/aws/managed-instances';
import { RunCommand } from '../../../lib/aws/run-command';
import { FleetError } from '../../../lib/core/errors';

const ssm = mockClient(SSMClient);
const lightsail = mockClient(LightsailClient);
const WHERE = { stage: 'prod', region: 'eu-west-2' };
const ROLE = 'queens-fleet-node-prod-eu-west-2-node-3';

beforeEach(() => {
  ssm.reset();
  lightsail.reset();
});

const registered = (...list: InstanceInformation[]): void => {
  ssm.on(DescribeInstanceInformationCommand).resolves({ InstanceInformationList: list });
};

describe('ManagedInstances', () => {
  it('finds a node given by name alone through its own role, the registration that is online first', async () => {
    registered(
      { InstanceId: 'mi-0000000000000000a', PingStatus: 'ConnectionLost', LastPingDateTime: new Date(2_000) },
      { InstanceId: 'mi-0000000000000000b', PingStatus: 'Online', LastPingDateTime: new Date(1_000) },
    );
    const instances = new ManagedInstances(new SSMClient({}), WHERE);
    await expect(instances.idOf({ name: 'node-3' })).resolves.toBe('mi-0000000000000000b');
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)[0]?.args[0].input.Filters).toEqual([
      { Key: 'IamRole', Values: [ROLE] },
    ]);
  });

  it('asks SSM nothing for a node whose id is configured, and asks once a minute for one by name', async () => {
    registered({ InstanceId: 'mi-0000000000000000b', PingStatus: 'Online' });
    let now = 0;
    const instances = new ManagedInstances(new SSMClient({}), WHERE, () => now);
    await expect(instances.idOf({ name: 'node-1', instanceId: 'mi-00000000000000001' })).resolves.toBe(
      'mi-00000000000000001',
    );
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(0);
    await instances.idOf({ name: 'node-3' });
    now = 59_000;
    await instances.idOf({ name: 'node-3' });
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(1);
    now = 61_000;
    await instances.idOf({ name: 'node-3' });
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(2);
  });

  it('commands none of two online registrations holding one role, and names both', async () => {
    registered(
      { InstanceId: 'mi-0000000000000000a', PingStatus: 'Online', LastPingDateTime: new Date(2_000) },
      { InstanceId: 'mi-0000000000000000b', PingStatus: 'Online', LastPingDateTime: new Date(1_000) },
    );
    const instances = new ManagedInstances(new SSMClient({}), WHERE);
    const caught = await instances.idOf({ name: 'node-3' }).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(FleetError);
    expect((caught as Error).message).toMatch(/2 online managed instances hold its role .*mi-0000000000000000a, mi-/);
  });

  it('lets a probe and a command in one run share one lookup', async () => {
    registered({ InstanceId: 'mi-0000000000000000b', PingStatus: 'Online' });
    const instances = new ManagedInstances(new SSMClient({}), WHERE, () => 0);
    await instances.describe({ name: 'node-3' });
    await expect(instances.idOf({ name: 'node-3' })).resolves.toBe('mi-0000000000000000b');
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(1);
  });

  it('says how to enroll a node that has no managed instance yet', async () => {
    registered();
    const instances = new ManagedInstances(new SSMClient({}), WHERE);
    const caught = await instances.idOf({ name: 'node-3' }).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(FleetError);
    expect((caught as Error).message).toBe(
      `node-3: no managed instance is registered with its role ${ROLE} (enroll it: fleet enroll node-3)`,
    );
  });

  it('reads every page of registrations', async () => {
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolvesOnce({
        InstanceInformationList: [{ InstanceId: 'mi-0000000000000000a', PingStatus: 'ConnectionLost' }],
        NextToken: 't',
      })
      .resolvesOnce({ InstanceInformationList: [{ InstanceId: 'mi-0000000000000000b', PingStatus: 'Online' }] });
    const found = await new ManagedInstances(new SSMClient({}), WHERE).describe({ name: 'node-3' });
    expect(found?.instanceId).toBe('mi-0000000000000000b');
  });
});

describe('RunCommand with a node given by name', () => {
  it('sends to, and reads the result from, the instance holding the node role', async () => {
    registered({ InstanceId: 'mi-0000000000000000b', PingStatus: 'Online' });
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-1' } });
    ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Success' });
    const client = new SSMClient({});
    const run = new RunCommand(client, new ManagedInstances(client, WHERE));
    await expect(run.send({ name: 'node-3' }, 'restartWorker', 'queen-fleet i-1')).resolves.toBe('cmd-1');
    await expect(run.result('cmd-1', { name: 'node-3' })).resolves.toMatchObject({ status: 'succeeded' });
    expect(ssm.commandCalls(SendCommandCommand)[0]?.args[0].input.InstanceIds).toEqual(['mi-0000000000000000b']);
    expect(ssm.commandCalls(GetCommandInvocationCommand)[0]?.args[0].input.InstanceId).toBe('mi-0000000000000000b');
  });

  it('refuses a node by name when it cannot look names up', async () => {
    await expect(new RunCommand(new SSMClient({})).send({ name: 'node-3' }, 'restartWorker', 'c')).rejects.toThrow(
      /node-3: no instanceId configured/,
    );
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
  });
});

describe('InstanceProbe with a node given by name', () => {
  it("takes SSM's opinion from the instance holding the node role", async () => {
    registered({ InstanceId: 'mi-0000000000000000b', PingStatus: 'ConnectionLost' });
    lightsail.on(GetInstanceStateCommand).resolves({ state: { name: 'running' } });
    const client = new SSMClient({});
    const probe = new InstanceProbe(new LightsailClient({}), new ManagedInstances(client, WHERE));
    await expect(probe.confirm({ name: 'node-3', lightsailName: 'fleet-3', priority: 1 })).resolves.toEqual({
      instance: 'running',
      ssm: 'lost',
    });
    registered();
    await expect(probe.confirm({ name: 'node-3', priority: 1 })).resolves.toMatchObject({ ssm: 'unknown' });
  });
});
