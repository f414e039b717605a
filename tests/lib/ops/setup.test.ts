import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CreateActivationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { loadConfig } from '../../../lib/config';
import { ValidationError } from '../../../lib/core/errors';
import { enrollNode, initConfig } from '../../../lib/ops/setup';

const cfn = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);

/** The outputs a deployed stack of this release has (resources/outputs.yml, node-roles.cjs). */
const OUTPUTS: Record<string, string> = {
  Stage: 'prod',
  InstanceTagValue: 'prod',
  StateBucketName: 'acme-queens-fleet-prod',
  ControlTableName: 'queens-fleet-control-prod',
  TaskQueueUrl: 'https://sqs.eu-west-2.amazonaws.com/123456789012/queens-fleet-tasks-prod',
  IntakeQueueUrl: 'https://sqs.eu-west-2.amazonaws.com/123456789012/queens-fleet-intake-prod',
  DeadLetterQueueUrl: 'https://sqs.eu-west-2.amazonaws.com/123456789012/queens-fleet-tasks-dlq-prod',
  NotifierFailureQueueUrl: 'https://sqs.eu-west-2.amazonaws.com/123456789012/queens-fleet-notifier-dlq-prod',
  AlertTopicArn: 'arn:aws:sns:eu-west-2:123456789012:fleet-events-prod',
  WatchdogFunctionName: 'queens-fleet-prod-watchdog',
  RunbookUrl: 'https://github.com/acme/queens-fleet/blob/main/docs/runbook.md',
  ReplayFunctionName: 'queens-fleet-prod-replay',
  FleetNodes: '[{"name":"node-1","priority":1},{"name":"node-2","priority":2}]',
  NodeRoleNode1Name: 'queens-fleet-node-prod-eu-west-2-node-1',
  NodeRoleNode2Name: 'queens-fleet-node-prod-eu-west-2-node-2',
};

const stackWith = (outputs: Record<string, string>): void => {
  cfn.on(DescribeStacksCommand, { StackName: 'queens-fleet-prod' }).resolves({
    Stacks: [
      {
        StackName: 'queens-fleet-prod',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date(0),
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
};

let dir: string;
beforeEach(() => {
  cfn.reset();
  ssm.reset();
  dir = mkdtempSync(join(tmpdir(), 'qf-setup-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('initConfig', () => {
  const init = (file: string, overwrite = false) =>
    initConfig(new CloudFormationClient({ region: 'eu-west-2' }), {
      stage: 'prod',
      region: 'eu-west-2',
      file,
      overwrite,
    });

  it("writes the fleet config from the stack's outputs, which the daemons and the CLI then load", async () => {
    stackWith(OUTPUTS);
    const file = join(dir, 'fleet-config.json');
    const done = await init(file);
    expect(done).toEqual({ path: file, stack: 'queens-fleet-prod', nodes: ['node-1', 'node-2'], missing: [] });
    const config = loadConfig({ FLEET_CONFIG_FILE: file });
    expect(config).toMatchObject({
      region: 'eu-west-2',
      stage: 'prod',
      bucket: 'acme-queens-fleet-prod',
      table: 'queens-fleet-control-prod',
      queueUrl: OUTPUTS.TaskQueueUrl,
      intakeQueueUrl: OUTPUTS.IntakeQueueUrl,
      deadLetterQueueUrl: OUTPUTS.DeadLetterQueueUrl,
      notifierFailureQueueUrl: OUTPUTS.NotifierFailureQueueUrl,
      topicArn: OUTPUTS.AlertTopicArn,
      watchdogFunction: 'queens-fleet-prod-watchdog',
      runbookUrl: OUTPUTS.RunbookUrl,
      nodes: [
        { name: 'node-1', priority: 1 },
        { name: 'node-2', priority: 2 },
      ],
    });
    // Only what the stack says: every other key keeps its default.
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object)).not.toContain('sampleIntervalSeconds');
  });

  it('refuses to replace a config file unless told to overwrite it', async () => {
    stackWith(OUTPUTS);
    const file = join(dir, 'fleet-config.json');
    writeFileSync(file, '{"region":"us-east-1"}');
    await expect(init(file)).rejects.toThrow(/exists: pass --overwrite to replace it/);
    expect(readFileSync(file, 'utf8')).toBe('{"region":"us-east-1"}');
    await init(file, true);
    expect(loadConfig({ FLEET_CONFIG_FILE: file }).region).toBe('eu-west-2');
  });

  it("updates a file with --overwrite: the stack's keys replaced, the operator's kept, one dropped gone", async () => {
    stackWith(OUTPUTS);
    const file = join(dir, 'fleet-config.json');
    const pipeline = [{ name: 'transcode', command: ['/opt/pipeline/transcode.sh'] }];
    const mine = { region: 'us-east-1', hostedZoneId: 'ZOLD', pipeline, stallSamples: 6 };
    writeFileSync(file, JSON.stringify(mine));
    await init(file, true);
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({ region: 'eu-west-2', pipeline, stallSamples: 6 });
    expect(written).not.toHaveProperty('hostedZoneId');
    writeFileSync(file, '[1]');
    await expect(init(file, true)).rejects.toThrow(/must be a JSON object/);
  });

  it('says what a stack of an older release lacks, and writes what it has, with the stage it was told', async () => {
    stackWith(
      Object.fromEntries(
        Object.entries(OUTPUTS).filter(
          ([key]) => !['Stage', 'FleetNodes', 'NotifierFailureQueueUrl', 'RunbookUrl'].includes(key),
        ),
      ),
    );
    const file = join(dir, 'c.json');
    const done = await init(file);
    expect(done.missing).toEqual(['Stage', 'NotifierFailureQueueUrl', 'RunbookUrl', 'FleetNodes']);
    expect(done.nodes).toEqual([]);
    expect(loadConfig({ FLEET_CONFIG_FILE: file }).stage).toBe('prod');
  });

  it('names a stack that is not there, and writes nothing', async () => {
    cfn.on(DescribeStacksCommand).rejects(new Error('Stack with id queens-fleet-prod does not exist'));
    const file = join(dir, 'c.json');
    const caught = await init(file).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as Error).message).toMatch(/stack queens-fleet-prod not found in eu-west-2/);
    expect(existsSync(file)).toBe(false);
  });
});

describe('enrollNode', () => {
  const NOW = Date.parse('2026-12-06T12:00:00Z');
  const enroll = (node: string) =>
    enrollNode(
      { cfn: new CloudFormationClient({ region: 'eu-west-2' }), ssm: new SSMClient({ region: 'eu-west-2' }) },
      {
        stage: 'prod',
        region: 'eu-west-2',
        node,
        expiresInHours: 1,
        configFile: '/home/ops/fleet-config.json',
        version: '1.0.0-rc.1',
        now: NOW,
      },
    );

  it("creates the node's activation with its own role, the fleet's tags, one registration and an hour", async () => {
    stackWith({ ...OUTPUTS, InstanceTagValue: 'prod-fleet' });
    ssm.on(CreateActivationCommand).resolves({ ActivationId: 'act-1', ActivationCode: 'c0de/+x' });
    const done = await enroll('node-2');
    expect(ssm.commandCalls(CreateActivationCommand).map((c) => c.args[0].input)).toEqual([
      {
        IamRole: 'queens-fleet-node-prod-eu-west-2-node-2',
        DefaultInstanceName: 'queen-fleet-node-2',
        Description: "Queen's Fleet prod node-2",
        RegistrationLimit: 1,
        ExpirationDate: new Date('2026-12-06T13:00:00Z'),
        Tags: [
          { Key: 'queen-fleet', Value: 'prod-fleet' },
          { Key: 'queen-fleet-node', Value: 'node-2' },
        ],
      },
    ]);
    expect(done.command).toBe(
      'sudo bash install.sh --bundle queens-fleet-agent-1.0.0-rc.1.tar.gz --config fleet-config.json ' +
        '--node node-2 --region eu-west-2 --activation-id act-1 --activation-code c0de/+x',
    );
  });

  it('refuses a node the stack has no role for, and creates nothing', async () => {
    stackWith(OUTPUTS);
    await expect(enroll('node-3')).rejects.toThrow(
      'node-3 has no role in stack queens-fleet-prod: add {"name":"node-3"} to its nodes parameter and deploy',
    );
    expect(ssm.commandCalls(CreateActivationCommand)).toHaveLength(0);
  });
});
