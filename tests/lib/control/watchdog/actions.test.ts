import { S3Client } from '@aws-sdk/client-s3';
import { DescribeInstanceInformationCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { ClientFactory } from '../../../../lib/aws/clients';
import { StateStore } from '../../../../lib/aws/state-store';
import { buildConfig } from '../../../../lib/core/config';
import { EventConflictError } from '../../../../lib/core/errors';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import { makeEvent } from '../../../../lib/core/fleet/watchdog-events';
import { emit, sendCommand } from '../../../../lib/control/watchdog/actions';
import { buildWatchdogDeps } from '../../../../lib/control/watchdog/build';
import type { WatchdogDeps } from '../../../../lib/control/watchdog/deps';
import { memoryLogger } from '../../../helpers/memory-logger';
import { MemoryS3 } from '../../../helpers/memory-s3';

describe('emit', () => {
  let s3: MemoryS3;
  const published: string[] = [];
  const deps = (): WatchdogDeps =>
    ({
      store: new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      }),
      alerts: { publish: (e: { id: string }) => Promise.resolve(published.push(e.id)) },
      log: memoryLogger().log,
    }) as unknown as WatchdogDeps;
  const promoted = (to: string, epoch: number, at = 1) =>
    makeEvent(
      'PROMOTED',
      'node-1',
      { id: 'manual-4-1799999999000', epoch: 4 },
      emptyCounter(),
      at,
      `${to} is primary`,
      { newPrimary: to, newEpoch: epoch },
    );

  beforeEach(() => {
    s3 = new MemoryS3();
    published.length = 0;
  });
  afterAll(() => s3.restore());

  it('writes and alerts a step once; the same step again (a concurrent run) is not an error', async () => {
    await expect(emit(deps(), promoted('node-2', 5))).resolves.toBe(true);
    await expect(emit(deps(), promoted('node-2', 5, 2))).resolves.toBe(false);
    expect(published).toEqual(['manual-4-1799999999000.PROMOTED']);
  });

  it('refuses, loudly, an event whose id is taken by a different one (two failovers filed under one id)', async () => {
    await emit(deps(), promoted('node-2', 5));
    await expect(emit(deps(), promoted('node-3', 5))).rejects.toBeInstanceOf(EventConflictError);
    expect(published).toHaveLength(1);
  });
});

describe('sendCommand to a node configured by name alone', () => {
  const ssm = mockClient(SSMClient);
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
    ssm.reset();
  });
  afterAll(() => {
    s3.restore();
    ssm.restore();
  });

  it('finds its managed instance by the node role and records the restart as sent', async () => {
    ssm.on(DescribeInstanceInformationCommand).resolves({
      InstanceInformationList: [{ InstanceId: 'mi-0000000000000000c', PingStatus: 'Online' }],
    });
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-7' } });
    const config = buildConfig({ FLEET_STAGE: 'prod', FLEET_NODES: '[{"name":"node-3"}]' });
    const deps = buildWatchdogDeps(config, new ClientFactory({ region: config.region }, {}), memoryLogger().log);
    await sendCommand(deps, {
      kind: 'command',
      node: 'node-3',
      instanceId: undefined,
      incidentId: 'node-3-e1-i1',
      command: 'restartWorker',
    });
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)[0]?.args[0].input.Filters).toEqual([
      { Key: 'IamRole', Values: ['queens-fleet-node-prod-us-west-2-node-3'] },
    ]);
    expect(ssm.commandCalls(SendCommandCommand)[0]?.args[0].input.InstanceIds).toEqual(['mi-0000000000000000c']);
  });
});
