import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetCommandInvocationCommand, ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import type { Context } from 'aws-lambda';
import { handler, resetForTests } from '../../functions/watchdog/handler';
import { logToForTests } from '../../lib/log';
import type { FleetEvent } from '../../lib/core/events';
import { frozen, heartbeat, NODES, working } from '../helpers/fixtures';
import { MemoryS3 } from '../helpers/memory-s3';

const TOPIC = 'arn:aws:sns:us-west-2:123456789012:fleet-events';
const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const s3Event = (key: string): unknown => ({ Records: [{ s3: { object: { key } } }] });

const ssm = mockClient(SSMClient);
const sns = mockClient(SNSClient);
const sqs = mockClient(SQSClient);
const TASKS = 'https://sqs.us-west-2.amazonaws.com/123456789012/tasks';
const INTAKE = 'https://sqs.us-west-2.amazonaws.com/123456789012/intake';
let s3: MemoryS3;

const published = (): FleetEvent[] =>
  sns.commandCalls(PublishCommand).map((c) => JSON.parse(c.args[0].input.Message ?? '{}') as FleetEvent);
const kinds = (): string[] => published().map((e) => e.kind);

describe('watchdog handler', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    ssm.reset();
    sns.reset();
    s3 = new MemoryS3();
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-0001' } });
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
    Object.assign(process.env, {
      FLEET_BUCKET: 'state-bucket',
      FLEET_TOPIC_ARN: TOPIC,
      FLEET_NODES: JSON.stringify(NODES),
    });
    resetForTests();
    s3.set('peer-sync/leader.json', {
      version: 1,
      primary: 'node-1',
      epoch: 3,
      renewals: 0,
      reason: 'test',
      changedBy: 'test',
    });
  });
  afterAll(() => {
    process.env = saved;
    s3.restore();
    ssm.restore();
    sns.restore();
    sqs.restore();
  });

  const stallPrimary = (): void => {
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(0, 9)));
    s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
  };

  it('restarts a stalled primary with the fixed command and nothing else', async () => {
    stallPrimary();
    await handler(s3Event('peer-sync/nodes/node-1/heartbeat.json'));
    expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
    expect(ssm).toHaveReceivedCommandWith(SendCommandCommand, {
      DocumentName: 'AWS-RunShellScript',
      InstanceIds: ['mi-00000000000000001'],
      Parameters: { commands: ['systemctl restart queen-fleet-worker'], executionTimeout: ['60'] },
      Comment: 'queen-fleet node-1-e3-i1',
      TimeoutSeconds: 60,
    });
  });

  it('alerts once per transition, with the metrics, however often it runs', async () => {
    stallPrimary();
    for (let i = 0; i < 4; i++) await handler(scheduled);
    expect(kinds()).toEqual(['STALLED', 'RESTART_SENT']);
    const stalled = published()[0];
    expect(stalled?.metrics).toMatchObject({ failingSamples: 8, fault: 'no-progress', workerProcesses: 1, backlog: 5 });
    expect(sns).toHaveReceivedCommandWith(PublishCommand, { TopicArn: TOPIC, Subject: '[queen-fleet] STALLED node-1' });
    expect(s3.json('peer-sync/events/node-1-e3-i1/STALLED.json')).toMatchObject({
      kind: 'STALLED',
      node: 'node-1',
      epoch: 3,
    });
  });

  it('restarts once when two invocations run at the same time', async () => {
    stallPrimary();
    await Promise.all([
      handler(scheduled),
      handler(s3Event('peer-sync/nodes/node-1/heartbeat.json')),
      handler(scheduled),
    ]);
    expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
    expect(kinds().filter((k) => k === 'STALLED')).toHaveLength(1);
  });

  it(
    'judges by a look taken after the state it applies to: ' + 'a leader record replaced meanwhile is never applied',
    async () => {
      stallPrimary();
      // The run reads the state only after a failover moved the role to node-2 (another run, or
      // the standby, acted meanwhile): it must judge with node-2 as primary, not the record it would
      // have read before. node-1 is then a standby, not a stalled primary: no STALLED, no restart.
      const release = s3.stallReads((key) => key === 'peer-sync/watchdog/state.json');
      const run = handler(scheduled);
      await new Promise((r) => setTimeout(r, 50));
      s3.set('peer-sync/leader.json', {
        version: 1,
        primary: 'node-2',
        epoch: 4,
        renewals: 0,
        reason: 'failover',
        changedBy: 'test',
        previous: 'node-1',
      });
      release();
      await run;
      expect(kinds()).not.toContain('STALLED');
      expect(ssm).not.toHaveReceivedCommandWith(SendCommandCommand, {
        Parameters: { commands: ['systemctl restart queen-fleet-worker'], executionTimeout: ['60'] },
        InstanceIds: ['mi-00000000000000001'],
      });
    },
  );

  it('records the verified outcome of the restart', async () => {
    stallPrimary();
    ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Success' });
    await handler(scheduled);
    await handler(scheduled);
    expect(ssm).toHaveReceivedCommandWith(GetCommandInvocationCommand, {
      CommandId: 'cmd-0001',
      InstanceId: 'mi-00000000000000001',
    });
    expect(kinds()).toEqual(['STALLED', 'RESTART_SENT', 'RESTART_RESULT']);
  });

  it(
    "writes the invocation's request id on every log line, " + "and the incident's id on the lines of its steps",
    async () => {
      const lines: Record<string, unknown>[] = [];
      logToForTests({ write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      const level = process.env.LOG_LEVEL;
      process.env.LOG_LEVEL = 'info';
      try {
        resetForTests();
        stallPrimary();
        // A line of no incident: node-2's heartbeat is unreadable.
        s3.set('peer-sync/nodes/node-2/heartbeat.json', 'not json');
        ssm.on(SendCommandCommand).rejects(
          Object.assign(new Error('instance not connected'), {
            name: 'InvalidInstanceId',
            $metadata: { httpStatusCode: 400 },
          }),
        );
        await handler(scheduled, { awsRequestId: 'req-7' } as Context);
      } finally {
        logToForTests(null);
        process.env.LOG_LEVEL = level;
        resetForTests();
      }
      expect(lines.length).toBeGreaterThanOrEqual(3);
      expect(lines.filter((l) => l.requestId !== 'req-7')).toEqual([]);
      // The alert of each step names the incident; the rejected heartbeat, of none, does not.
      const steps = lines.filter((l) => l.event === 'STALLED' || l.event === 'RESTART_FAILED');
      expect(steps).toHaveLength(2);
      for (const l of steps) expect(l.incidentId).toBe('node-1-e3-i1');
      const rejected = lines.find((l) => l.msg === 'heartbeat rejected');
      expect(rejected).toBeDefined();
      expect(rejected).not.toHaveProperty('incidentId');
    },
  );

  it('alerts RESTART_FAILED when the command cannot be delivered', async () => {
    stallPrimary();
    ssm.on(SendCommandCommand).rejects(
      Object.assign(new Error('instance not connected'), {
        name: 'InvalidInstanceId',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    await handler(scheduled);
    expect(kinds()).toEqual(['STALLED', 'RESTART_FAILED']);
    expect(published()[1]?.summary).toContain('not delivered');
  });

  it('skips a malformed heartbeat, reports it, and still judges the others', async () => {
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(0, 9)));
    s3.set('peer-sync/nodes/node-2/heartbeat.json', '{"version":1,"node":');
    const run = await handler(scheduled);
    expect(run.rejected).toEqual([expect.stringContaining('node-2')]);
    expect(run.heartbeats).toBe(1);
    expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
  });

  it('rejects a heartbeat that claims to be another node', async () => {
    s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-1', frozen(0, 9)));
    const run = await handler(scheduled);
    expect(run.rejected).toEqual(['node-2: heartbeat claims node node-1']);
    expect(ssm).not.toHaveReceivedCommand(SendCommandCommand);
  });

  it('ignores a notification for a node the fleet does not know', async () => {
    stallPrimary();
    const run = await handler(s3Event('peer-sync/nodes/node-9/heartbeat.json'));
    expect(run.rejected).toEqual(['peer-sync/nodes/node-9/heartbeat.json']);
    expect(s3.mock.calls()).toHaveLength(0);
  });

  it('writes nothing while every node stays healthy, after noting each agent boot once', async () => {
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
    s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
    await handler(scheduled);
    expect(s3.puts.map((p) => p.key)).toEqual(['peer-sync/watchdog/state.json']);
    s3.puts = [];
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 20)));
    for (let i = 0; i < 3; i++) await handler(scheduled);
    expect(s3.puts).toEqual([]);
    expect(sns).not.toHaveReceivedCommand(PublishCommand);
  });

  it('rebuilds a corrupt state object after copying it aside', async () => {
    stallPrimary();
    s3.set('peer-sync/watchdog/state.json', '{"version": 99}');
    await handler(scheduled);
    expect([...s3.objects.keys()].some((k) => k.startsWith('peer-sync/quarantine/watchdog_state.json.'))).toBe(true);
    expect(s3.json('peer-sync/watchdog/state.json')).toMatchObject({ version: 2 });
    expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
  });

  describe('a write that landed is never taken as lost', () => {
    it.each(['reset', 'internal-error'] as const)(
      'sends the claimed restart and alerts once when the state write is applied and its response lost (%s)',
      async (how) => {
        stallPrimary();
        s3.loseNext((k) => k === 'peer-sync/watchdog/state.json', how);
        await handler(scheduled);
        expect(ssm).toHaveReceivedCommandTimes(SendCommandCommand, 1);
        expect(kinds()).toEqual(['STALLED', 'RESTART_SENT']);
        // The claim stands as sent: a later run does not take it for
        // a claim nobody sent (and fail over without a restart).
        expect(s3.json('peer-sync/watchdog/state.json')).toMatchObject({
          nodes: { 'node-1': { incident: { stage: { name: 'restart-sent' }, restart: { commandId: 'cmd-0001' } } } },
        });
      },
    );

    it('alerts once when the event write is applied and its response lost', async () => {
      stallPrimary();
      s3.loseNext((k) => k.startsWith('peer-sync/events/'), 'internal-error');
      await handler(scheduled);
      await handler(scheduled);
      expect(kinds()).toEqual(['STALLED', 'RESTART_SENT']);
    });
  });

  describe('a restart claimed but never recorded as sent', () => {
    /** The state of a run that claimed the restart two minutes ago and lost the record of sending it. */
    const claimedLongAgo = async (): Promise<void> => {
      stallPrimary();
      await handler(scheduled);
      const state = s3.json('peer-sync/watchdog/state.json') as {
        nodes: Record<string, { incident: Record<string, unknown> }>;
      };
      const incident = state.nodes['node-1'].incident;
      Object.assign(incident, {
        stage: { name: 'restart-claimed' },
        restart: { command: 'restartWorker', claimedAt: Date.now() - 120_000 },
      });
      s3.set('peer-sync/watchdog/state.json', state);
      s3.objects.delete('peer-sync/events/node-1-e3-i1/RESTART_SENT.json');
      ssm.reset();
      sns.reset();
      sns.on(PublishCommand).resolves({ MessageId: 'm-2' });
    };

    it('finds the command SSM has for the incident and verifies it, sending nothing again', async () => {
      await claimedLongAgo();
      ssm.on(ListCommandsCommand).resolves({
        Commands: [
          { CommandId: 'cmd-other', Comment: 'queen-fleet node-2-e3-i1' },
          { CommandId: 'cmd-0009', Comment: 'queen-fleet node-1-e3-i1' },
        ],
      });
      ssm.on(GetCommandInvocationCommand).resolves({ Status: 'InProgress' });
      await handler(scheduled);
      expect(ssm).toHaveReceivedCommandWith(ListCommandsCommand, { InstanceId: 'mi-00000000000000001' });
      expect(ssm).not.toHaveReceivedCommand(SendCommandCommand);
      expect(published().map((e) => [e.kind, e.commandId])).toEqual([['RESTART_SENT', 'cmd-0009']]);
    });

    it('fails the restart when SSM never saw it', async () => {
      await claimedLongAgo();
      ssm.on(ListCommandsCommand).resolves({ Commands: [] });
      await handler(scheduled);
      expect(kinds()).toEqual(['RESTART_FAILED']);
    });
  });

  describe('damaged control objects heal', () => {
    const atEpoch = (node: string, epoch: number, role: 'primary' | 'standby') => ({
      ...heartbeat(
        node,
        working(0, 9).map((x) => ({ ...x, epochSeen: epoch, consumingEpoch: role === 'primary' ? epoch : null })),
      ),
      role,
    });

    it('carries incident numbers on after the state is rebuilt, so the next incident is alerted', async () => {
      stallPrimary();
      await handler(scheduled);
      s3.set('peer-sync/watchdog/state.json', '{"version": 2, "nodes": ');
      await handler(scheduled);
      expect(kinds()).toEqual(['STALLED', 'RESTART_SENT', 'STATE_DAMAGED', 'STALLED', 'RESTART_SENT']);
      expect(
        published()
          .filter((e) => e.kind === 'STALLED')
          .map((e) => e.incidentId),
      ).toEqual(['node-1-e3-i1', 'node-1-e3-i2']);
    });

    it('rebuilds a damaged leader record for the node that holds the highest epoch, and alerts once', async () => {
      s3.set('peer-sync/nodes/node-1/heartbeat.json', atEpoch('node-1', 3, 'primary'));
      s3.set('peer-sync/nodes/node-2/heartbeat.json', atEpoch('node-2', 3, 'standby'));
      s3.set('peer-sync/leader.json', '{"version":1,"primary":"node-1","epo');
      await handler(scheduled);
      await handler(scheduled);
      expect(s3.json('peer-sync/leader.json')).toMatchObject({ primary: 'node-1', epoch: 3, changedBy: 'watchdog' });
      expect(kinds()).toEqual(['LEADER_DAMAGED']);
      expect(published()[0]).toMatchObject({ newPrimary: 'node-1', newEpoch: 3 });
      expect([...s3.objects.keys()].some((k) => k.startsWith('peer-sync/quarantine/leader.json.'))).toBe(true);
    });

    it(
      'reads a record of the next version with fields it ' + 'does not know, and keeps them from stopping anything',
      async () => {
        stallPrimary();
        s3.set('peer-sync/leader.json', {
          version: 2,
          primary: 'node-1',
          epoch: 3,
          renewals: 0,
          reason: 'test',
          changedBy: 'test',
          fencingToken: 'abc',
        });
        await handler(scheduled);
        expect(kinds()).toEqual(['STALLED', 'RESTART_SENT']);
      },
    );
  });

  it(
    'admits from the intake queue on its schedule, ' +
      'up to the high mark, and reads no queue on a heartbeat notification',
    async () => {
      sqs.reset();
      Object.assign(process.env, {
        FLEET_QUEUE_URL: TASKS,
        FLEET_INTAKE_QUEUE_URL: INTAKE,
        FLEET_ADMISSION_HIGH_MARK: '5',
        FLEET_ADMISSION_LOW_MARK: '1',
      });
      resetForTests();
      try {
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: TASKS })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '1', ApproximateNumberOfMessagesNotVisible: '1' } });
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: INTAKE })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '40' } });
        sqs.on(ReceiveMessageCommand).resolves({
          Messages: [1, 2, 3].map((i) => ({ MessageId: `m${i}`, ReceiptHandle: `r${i}`, Body: `{"taskId":"t${i}"}` })),
        });
        sqs.on(SendMessageBatchCommand).resolves({
          Successful: [0, 1, 2].map((i) => ({ Id: String(i), MessageId: `n${i}`, MD5OfMessageBody: '' })),
          Failed: [],
        });
        sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });
        s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
        s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));

        await handler(s3Event('peer-sync/nodes/node-1/heartbeat.json'));
        expect(sqs.calls()).toHaveLength(0);

        await handler(scheduled);
        // 2 of 5 taken: 3 admitted, sent on as one batch and deleted from intake.
        expect(sqs).toHaveReceivedCommandWith(ReceiveMessageCommand, { QueueUrl: INTAKE, MaxNumberOfMessages: 3 });
        expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, { QueueUrl: TASKS });
        expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries?.map((e) => e.MessageBody)).toEqual([
          '{"taskId":"t1"}',
          '{"taskId":"t2"}',
          '{"taskId":"t3"}',
        ]);
        expect(sqs).toHaveReceivedCommandWith(DeleteMessageBatchCommand, {
          QueueUrl: INTAKE,
          Entries: [0, 1, 2].map((i) => ({ Id: String(i), ReceiptHandle: `r${i + 1}` })),
        });

        // Two runs at once (the schedule and a node's trigger) read the
        // same depths: one admits (CI run 16: the queue reached 11 of 10).
        sqs.resetHistory();
        s3.set('peer-sync/watchdog/state.json', {
          version: 2,
          revision: 0,
          nodes: {},
          lastFailoverAt: null,
          judgedAt: null,
        });
        await Promise.all([
          handler(scheduled),
          handler({ source: 'queen-fleet.agent', node: 'node-1' }),
          handler(scheduled),
        ]);
        expect(sqs.commandCalls(SendMessageBatchCommand).flatMap((c) => c.args[0].input.Entries ?? [])).toHaveLength(3);
      } finally {
        for (const k of [
          'FLEET_QUEUE_URL',
          'FLEET_INTAKE_QUEUE_URL',
          'FLEET_ADMISSION_HIGH_MARK',
          'FLEET_ADMISSION_LOW_MARK',
        ])
          delete process.env[k];
      }
    },
  );

  it(
    'reads the queues only failures reach one schedule period in five, and alerts what ' +
      "the alarms on them did: a rise of the notifier's failures, input waiting at every read",
    async () => {
      sqs.reset();
      const FAILURES = 'https://sqs.us-west-2.amazonaws.com/123456789012/notifier-failures';
      Object.assign(process.env, {
        FLEET_QUEUE_URL: TASKS,
        FLEET_INTAKE_QUEUE_URL: INTAKE,
        FLEET_NOTIFIER_FAILURE_QUEUE_URL: FAILURES,
        FLEET_INTAKE_WAIT_ALERT_SECONDS: '60',
      });
      resetForTests();
      // The watchdog's clock: the first minute of a 5-minute block (a period whose index is 0 mod 5).
      let now = 1_800_000_000_000;
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        // Input held (no standby ready at the high mark): the intake queue never empties.
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: TASKS })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '50', ApproximateNumberOfMessagesNotVisible: '2' } });
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: INTAKE })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '7' } });
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: FAILURES })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' } });
        s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
        s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));

        await handler(scheduled);
        expect(kinds().filter((k) => k !== 'INPUT_HELD')).toEqual([]);
        expect(
          sqs.commandCalls(GetQueueAttributesCommand).filter((c) => c.args[0].input.QueueUrl === FAILURES),
        ).toHaveLength(1);
        sqs
          .on(GetQueueAttributesCommand, { QueueUrl: FAILURES })
          .resolves({ Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '0' } });
        // The next minute (and the three after): the failure queue is not read, the intake is.
        now += 61_000;
        sqs.resetHistory();
        await handler(scheduled);
        expect(
          sqs
            .commandCalls(GetQueueAttributesCommand)
            .map((c) => c.args[0].input.QueueUrl)
            .sort(),
        ).toEqual([INTAKE, TASKS].sort());
        expect(published().filter((e) => e.kind === 'NOTIFIER_FAILED')).toEqual([]);
        // Five minutes on: read again, the rise alerted; and the intake has waited past its minute.
        now += 4 * 60_000;
        await handler(scheduled);
        await handler(scheduled);
        const alerts = published().filter((e) => e.kind === 'NOTIFIER_FAILED' || e.kind === 'INPUT_WAITING');
        expect(alerts.map((e) => [e.kind, e.id]).sort()).toEqual([
          ['INPUT_WAITING', 'input-wait-1.INPUT_WAITING'],
          ['NOTIFIER_FAILED', 'notifier-failure-1.NOTIFIER_FAILED'],
        ]);
        // The Slack subscription filters this kind out by the message attribute (serverless.yml).
        const attributes = sns
          .commandCalls(PublishCommand)
          .map((c) => c.args[0].input)
          .find((i) => i.MessageAttributes?.kind?.StringValue === 'NOTIFIER_FAILED');
        expect(attributes).toBeDefined();
      } finally {
        clock.mockRestore();
        for (const k of [
          'FLEET_QUEUE_URL',
          'FLEET_INTAKE_QUEUE_URL',
          'FLEET_NOTIFIER_FAILURE_QUEUE_URL',
          'FLEET_INTAKE_WAIT_ALERT_SECONDS',
        ])
          delete process.env[k];
      }
    },
  );
});
