import { emptyCounter } from '../../../lib/core/fleet/stall';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetCommandInvocationCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { ClientFactory } from '../../../lib/aws/clients';
import { buildConfig } from '../../../lib/core/config';
import { ValidationError } from '../../../lib/core/errors';
import type { FleetEvent } from '../../../lib/core/events';
import type { Leader } from '../../../lib/core/schemas';
import { manualFailover } from '../../../lib/ops/manual-failover';
import { opsDeps, type OpsDeps } from '../../../lib/ops/observe';
import { heartbeat, sample } from '../../helpers/fixtures';
import { MemoryS3 } from '../../helpers/memory-s3';
import { memoryLogger } from '../../helpers/memory-logger';

const NOW = 1_800_000_000_000;
const NODES = [1, 2, 3].map((i) => ({ name: `node-${i}`, instanceId: `mi-0000000000000000${i}`, priority: i }));
const config = buildConfig(
  {},
  { nodes: NODES, topicArn: 'arn:aws:sns:us-west-2:123456789012:fleet-events', commandWaitSeconds: 2 },
);
const LEADER_KEY = 'peer-sync/leader.json';
const leaderAt4: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 4,
  renewals: 30,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};

const ssm = mockClient(SSMClient);
const sns = mockClient(SNSClient);
let s3: MemoryS3;
let t: number;
/** Each SSM command with the epoch leader.json held when it was sent: proves the order of steps. */
let trail: string[];
let onSend: (command: string, instanceId: string) => void;

const deps = (): OpsDeps => ({
  ...opsDeps({ config, clients: new ClientFactory({ region: 'us-west-2' }, {}), where: 'test' }, memoryLogger().log),
  now: () => t,
  sleep: (ms: number) => {
    t += ms;
    return Promise.resolve();
  },
});
const leader = (): Leader => s3.json(LEADER_KEY) as Leader;
const events = (): FleetEvent[] =>
  [...s3.objects.keys()].filter((k) => k.startsWith('peer-sync/events/')).map((k) => s3.json(k) as FleetEvent);

describe('manualFailover', () => {
  beforeEach(() => {
    t = NOW;
    trail = [];
    onSend = () => undefined;
    s3 = new MemoryS3();
    // S3's Last-Modified, which readiness judges heartbeats by: written a second ago.
    s3.mock.on(ListObjectsV2Command).callsFake((input: { Prefix?: string }) => ({
      Contents: [...s3.objects.keys()]
        .filter((k) => k.startsWith(input.Prefix ?? ''))
        .map((Key) => ({ Key, LastModified: new Date(NOW - 1000) })),
      IsTruncated: false,
    }));
    ssm.reset();
    sns.reset();
    let n = 0;
    ssm.on(SendCommandCommand).callsFake((input: { InstanceIds: string[]; Parameters: { commands: string[] } }) => {
      const instanceId = input.InstanceIds[0] ?? '';
      const command = input.Parameters.commands[0] ?? '';
      trail.push(`${command.split(' ')[1] ?? ''} ${instanceId} @${leader().epoch}`);
      onSend(command, instanceId);
      return { Command: { CommandId: `cmd-${++n}` } };
    });
    ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Success' });
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
    s3.set(LEADER_KEY, leaderAt4);
    s3.set('peer-sync/watchdog/state.json', {
      version: 1,
      revision: 1,
      lastFailoverAt: null,
      nodes: {
        'node-1': {
          counter: emptyCounter(),
          incident: {
            id: 'node-1-e4-i1',
            kind: 'stall',
            openedAt: 1,
            epoch: 4,
            restart: null,
            escalated: false,
            failover: null,
            noStandbyAlerted: false,
          },
          restartTimes: [],
          incidents: 1,
          seen: null,
        },
      },
    });
    s3.set('peer-sync/nodes/node-1/heartbeat.json', {
      ...heartbeat('node-1', [sample(0, { epochSeen: 4 })]),
      role: 'primary',
    });
    for (const node of ['node-2', 'node-3'])
      s3.set(`peer-sync/nodes/${node}/heartbeat.json`, {
        ...heartbeat(node, [sample(0, { epochSeen: 4, consumingEpoch: null })]),
        role: 'standby',
      });
  });
  afterAll(() => {
    ssm.restore();
    sns.restore();
    s3.restore();
  });

  it(
    "stops the old primary's worker first, then promotes " + 'with an immediate handover, then starts the new worker',
    async () => {
      const result = await manualFailover(deps(), { to: 'node-2', reason: 'kernel update', force: false });

      expect(trail).toEqual(['stop mi-00000000000000001 @4', 'start mi-00000000000000002 @5']);
      expect(leader()).toMatchObject({
        primary: 'node-2',
        epoch: 5,
        previous: 'node-1',
        handover: 'immediate',
        reason: expect.stringMatching(new RegExp(`^manual-4-${NOW}-[0-9a-f]{8}: node-1 → node-2: kernel update$`)),
      });
      expect(result).toMatchObject({
        ok: true,
        refused: null,
        from: 'node-1',
        fromEpoch: 4,
        newEpoch: 5,
        handover: 'immediate',
        incidentId: expect.stringMatching(new RegExp(`^manual-4-${NOW}-[0-9a-f]{8}$`)),
      });
      expect(result.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
        'check:ok',
        'stop-old-worker:ok',
        'promote:ok',
        'cooldown:ok',
        'event:ok',
        'start-worker:ok',
        'origin-record:skipped',
      ]);
      expect(leader()).toMatchObject({ changedBy: 'operator' });
      // The watchdog's cooldown runs from a manual failover too, and the old primary's incident is over.
      expect(s3.json('peer-sync/watchdog/state.json')).toMatchObject({
        lastFailoverAt: expect.any(Number),
        nodes: { 'node-1': { incident: null } },
      });
      expect(events()).toEqual([
        expect.objectContaining({
          kind: 'PROMOTED',
          incidentId: expect.stringMatching(new RegExp(`^manual-4-${NOW}-[0-9a-f]{8}$`)),
          node: 'node-1',
          epoch: 4,
          newPrimary: 'node-2',
          newEpoch: 5,
        }),
      ]);
      expect(sns).toHaveReceivedCommandTimes(PublishCommand, 1);
    },
  );

  it('hands over only after the old lease when the old worker is not confirmed stopped', async () => {
    ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Failed', StatusDetails: 'Failed' });

    const result = await manualFailover(deps(), { to: 'node-2', reason: 'kernel update', force: false });

    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 5, handover: 'await-fence' });
    expect(result.steps.find((s) => s.step === 'stop-old-worker')).toMatchObject({ status: 'warn' });
    expect(events()[0]?.summary).toContain('node-1: worker not confirmed stopped; it fences itself.');
  });

  it('fails cleanly when the role moved meanwhile, and leaves the stopped worker stopped', async () => {
    const moved: Leader = { ...leaderAt4, primary: 'node-3', epoch: 5, previous: 'node-1', changedBy: 'watchdog' };
    onSend = (command) => {
      if (command.includes('stop')) s3.set(LEADER_KEY, moved);
    };

    const result = await manualFailover(deps(), { to: 'node-2', reason: 'kernel update', force: false });

    expect(result.ok).toBe(false);
    expect(result.refused).toBe(
      'the role moved meanwhile: leader.json now names node-3 at epoch 5; nothing was changed',
    );
    expect(leader()).toEqual(moved);
    expect(events()).toEqual([]);
    // The watchdog that moved the role may have granted an immediate start because that worker
    // was stopped: starting it again would make two consumers.
    expect(trail).toEqual(['stop mi-00000000000000001 @4']);
    expect(result.steps.at(-1)).toMatchObject({ step: 'restart-old-worker', status: 'skipped' });
  });

  it('rejects a node the configuration does not name as a bad --to, before acting', async () => {
    await expect(manualFailover(deps(), { to: 'node-9', reason: 'x', force: true })).rejects.toThrow(ValidationError);
    expect(trail).toEqual([]);
    expect(leader()).toEqual(leaderAt4);
  });
});
