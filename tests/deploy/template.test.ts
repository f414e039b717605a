import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SDK_PACKAGES } from '../../lib/aws/sdk';
import { KEYS } from '../../lib/core/keys';
import { buildConfig } from '../../lib/core/config';
import { outageHourReceives } from '../../lib/core/timeouts';
import { METRICS_NAMESPACE, publishedAt } from '../../lib/core/metrics/catalogue';
import { dashboardFragment } from '../../lib/deploy/dashboard';
import { lambdaLikeDir } from '../../lib/deploy/lambda-dir';
import { unpackZip } from '../../lib/deploy/zip';
import { checkTemplate } from '../../lib/deploy/check';
import { createSpecLookup } from '../../lib/deploy/spec';
import { alarmAnchorIn } from '../../lib/core/runbook';
import { anchorsOf } from '../helpers/markdown';
import { asList, CI_PARAMS, NODE_ROLES, packageTemplate, reader, sub, type Statement, type Template } from './packaged';
import { decide, type Decision, type Request } from './policy-eval';

/**
 * The packaged CloudFormation, as `sls package` writes it offline, with every optional
 * parameter set so the conditional resources are there too: checked against the CloudFormation
 * resource specification, then held to least privilege and the storage hardening. The nodes'
 * roles have their own file (node-role.test.ts).
 */

let template: Template;
let out: string;
let t: ReturnType<typeof reader>;
const props = (id: string): Record<string, unknown> => t.props(id);
const statements = (roleId: string): Statement[] => t.statements(roleId);
const actionsOf = (roleId: string): string[] => t.actionsOf(roleId);
const resources = (type: string): ReturnType<typeof t.resources> => t.resources(type);
const functionRole = (fn: string): string =>
  (props(`${fn}LambdaFunction`).Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];

beforeAll(() => {
  ({ template, out } = packageTemplate('package-test', CI_PARAMS));
  t = reader(template);
}, 120_000);

describe('packaged template', () => {
  it('matches the CloudFormation resource specification', () => {
    expect(checkTemplate(template, createSpecLookup())).toEqual([]);
  });

  it('bundles each function on its own, on nodejs22.x, in at most 250 KiB, the AWS SDK in a layer of its own', () => {
    for (const fn of ['watchdog', 'notifier', 'replay']) {
      expect(statSync(join(out, `${fn}.zip`)).size).toBeLessThanOrEqual(250 * 1024);
      const fnProps = props(`${fn[0]?.toUpperCase() ?? ''}${fn.slice(1)}LambdaFunction`);
      expect(fnProps.Runtime).toBe('nodejs22.x');
      expect(fnProps.Layers).toEqual([{ Ref: 'AwsSdkLambdaLayer' }]);
    }
    expect(props('AwsSdkLambdaLayer')).toMatchObject({
      CompatibleRuntimes: ['nodejs22.x'],
      CompatibleArchitectures: ['arm64'],
    });
  });

  it('each function finds every package it loads in the layer, and no SDK is left in its zip', () => {
    // As Lambda lays them out: the function in one folder, the
    // layer in another on NODE_PATH, no node_modules above either.
    const lambda = lambdaLikeDir('qf-lambda-');
    try {
      unpackZip(join(out, 'awsSdk.zip'), join(lambda, 'opt'));
      const nodePath = join(lambda, 'opt', 'nodejs', 'node_modules');
      for (const fn of ['watchdog', 'notifier', 'replay']) {
        unpackZip(join(out, `${fn}.zip`), join(lambda, fn));
        const bundle = join(lambda, fn, 'functions', fn, 'handler.js');
        // Every SDK package the fleet loads, and the handler, through the layer only.
        const script =
          `for (const p of ${JSON.stringify(SDK_PACKAGES)}) require(p); ` +
          `const h = require(${JSON.stringify(bundle)}).handler; process.stdout.write(typeof h);`;
        const env = {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'us-west-2',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '1',
        };
        const withLayer = spawnSync(process.execPath, ['-e', script], {
          cwd: lambda,
          encoding: 'utf8',
          env: { ...env, NODE_PATH: nodePath },
        });
        expect({ fn, out: withLayer.stdout, err: withLayer.stderr }).toEqual({ fn, out: 'function', err: '' });
        // The SDK stays outside: the bundle asks for its packages by name, and only for ones the layer has.
        const asked = [
          ...new Set([...readFileSync(bundle, 'utf8').matchAll(/require\("(@aws-sdk\/[^"]+)"\)/g)].map((m) => m[1])),
        ];
        expect(asked.length).toBeGreaterThan(0);
        expect(asked.filter((p) => !(SDK_PACKAGES as readonly (string | undefined)[]).includes(p))).toEqual([]);
      }
    } finally {
      rmSync(lambda, { recursive: true, force: true });
    }
  });
});

describe('least privilege', () => {
  const roles = (): string[] => resources('AWS::IAM::Role').map(([id]) => id);

  it('gives every function a role of its own, and no shared default role', () => {
    expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
    expect(['Watchdog', 'Notifier', 'Replay'].map(functionRole)).toEqual([
      'WatchdogRole',
      'NotifierRole',
      'ReplayRole',
    ]);
  });

  it('allows no wildcard action in any role', () => {
    const wild = roles().flatMap((role) =>
      actionsOf(role)
        .filter((a) => a.includes('*'))
        .map((a) => `${role} ${a}`),
    );
    expect(wild).toEqual([]);
  });

  it('grants on a wildcard resource only calls that take no resource ARN', () => {
    const anywhere = roles().flatMap((role) =>
      statements(role)
        .filter((s) => s.Effect === 'Allow' && s.Resource === '*')
        .flatMap((s) => asList(s.Action)),
    );
    expect([...new Set(anywhere)].sort()).toEqual([
      // The SSM Agent's own calls on the nodes (resources/node-iam.yml NodeSsmAgentPolicy).
      ...['AcknowledgeMessage', 'DeleteMessage', 'FailMessage', 'GetEndpoint', 'GetMessages', 'SendReply'].map(
        (a) => `ec2messages:${a}`,
      ),
      'lightsail:GetInstanceState',
      'ssm:CancelCommand',
      'ssm:DescribeInstanceInformation',
      'ssm:GetCommandInvocation',
      'ssm:ListCommands',
      'ssm:ListInstanceAssociations',
      'ssm:UpdateInstanceInformation',
      'ssmmessages:CreateControlChannel',
      'ssmmessages:OpenControlChannel',
    ]);
  });

  it('limits ssm:SendCommand to AWS-RunShellScript and the fleet-tagged managed instances', () => {
    for (const role of ['WatchdogRole', 'ReplayRole']) {
      const send = statements(role).filter((s) => asList(s.Action).includes('ssm:SendCommand'));
      expect(send.map((s) => sub(s.Resource))).toEqual([
        'arn:${AWS::Partition}:ssm:${AWS::Region}::document/AWS-RunShellScript',
        'arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:managed-instance/*',
      ]);
      expect(send[1]?.Condition).toEqual({ StringEquals: { 'ssm:resourceTag/queen-fleet': 'ci' } });
    }
  });

  it('lets the notifier read its webhook parameter and write its logs, nothing else', () => {
    expect(actionsOf('NotifierRole')).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'sqs:SendMessage',
      'ssm:GetParameter',
    ]);
    const send = statements('NotifierRole').find((s) => asList(s.Action).includes('sqs:SendMessage'));
    expect(send?.Resource).toEqual({ 'Fn::GetAtt': ['NotifierFailureQueue', 'Arn'] });
    const get = statements('NotifierRole').find((s) => asList(s.Action).includes('ssm:GetParameter'));
    expect(sub(get?.Resource)).toBe(
      'arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/queens-fleet/ci/slack-webhook-url',
    );
    expect(
      Object.keys((props('NotifierLambdaFunction').Environment as { Variables: object }).Variables).filter((k) =>
        k.startsWith('FLEET_'),
      ),
    ).toEqual([]);
  });

  it('scopes state access to the state prefix and each log permission to its own log group', () => {
    // The nodes' state access is per key: node-role.test.ts.
    for (const role of ['WatchdogRole', 'ReplayRole']) {
      const state = statements(role).find((s) => asList(s.Action).includes('s3:PutObject'));
      expect(sub(state?.Resource)).toBe('arn:${AWS::Partition}:s3:::acme-queens-fleet-ci/peer-sync/*');
    }
    for (const fn of ['watchdog', 'notifier', 'replay']) {
      const role = `${fn[0]?.toUpperCase() ?? ''}${fn.slice(1)}Role`;
      const logs = statements(role).filter((s) => asList(s.Action).some((a) => a.startsWith('logs:')));
      expect(logs.map((s) => sub(s.Resource))).toEqual([
        `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/queens-fleet-ci-${fn}:*`,
      ]);
    }
  });

  it(
    "lets the functions read and write the control table's two records, " +
      "the lease and the watchdog's state, read the nodes' beats, and no other item",
    () => {
      const item = (action: string, key: string): Request => ({
        action,
        resource: 'ref:ControlTable.Arn',
        context: { 'dynamodb:LeadingKeys': key },
      });
      for (const role of ['WatchdogRole', 'ReplayRole']) {
        const table = statements(role).filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')));
        expect(table.map((s) => s.Sid)).toEqual(['ControlRecords', 'NodeBeats']);
        expect(asList(table[0]?.Action).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
        expect(table[0]?.Resource).toEqual({ 'Fn::GetAtt': ['ControlTable', 'Arn'] });
        expect(table[0]?.Condition).toEqual({
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [KEYS.leader, KEYS.watchdogState] },
        });
        // The beats: read, never written (each is its own node's alone).
        expect(table[1]).toEqual({
          Sid: 'NodeBeats',
          Effect: 'Allow',
          Action: 'dynamodb:GetItem',
          Resource: { 'Fn::GetAtt': ['ControlTable', 'Arn'] },
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['nodes/*/beat'] } },
        });
        const judge = (request: Request): Decision => decide(statements(role), request);
        for (const node of ['node-1', 'node-2', 'node-3']) {
          expect(judge(item('dynamodb:GetItem', KEYS.beat(node)))).toBe('allow');
          for (const action of ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'])
            expect(judge(item(action, KEYS.beat(node)))).toBe('implicit-deny');
        }
        for (const key of [KEYS.leader, KEYS.watchdogState])
          for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem'])
            expect(judge(item(action, key))).toBe('allow');
        for (const key of ['other', KEYS.heartbeat('node-1'), 'nodes/node-1/other'])
          for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem'])
            expect(judge(item(action, key))).toBe('implicit-deny');
      }
      expect(statements('NotifierRole').filter((s) => asList(s.Action).some((a) => a.startsWith('dynamodb:')))).toEqual(
        [],
      );
    },
  );

  it(
    "declares the fleet's dashboard from the catalogue: " +
      "a widget a panel, a line a node, the stack's own queues and watchdog",
    () => {
      const dashboard = props('FleetDashboard');
      expect(dashboard.DashboardName).toBe('queens-fleet-ci');
      const text = sub(dashboard.DashboardBody);
      const refs = new Set([...text.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]));
      expect([...refs].sort()).toEqual([
        'AWS::Region',
        'DeadLetterQueue.QueueName',
        'IntakeQueue.QueueName',
        'NotifierFailureQueue.QueueName',
        'TaskQueue.QueueName',
        'WatchdogLambdaFunction',
      ]);
      const body = JSON.parse(text) as {
        widgets: { type: string; width: number; properties: { title: string; metrics: unknown[][] } }[];
      };
      const lines = body.widgets.flatMap((w) => w.properties.metrics);
      const ours = lines.filter((l) => l[0] === METRICS_NAMESPACE);
      // The stack's default level, essential: each of its metrics, a node metric once a node.
      const expected = publishedAt('essential').flatMap((m) =>
        m.scope === 'node'
          ? ['node-1', 'node-2', 'node-3'].map((n) => `${m.name} Fleet acme-queens-fleet-ci Node ${n}`)
          : [`${m.name} Fleet acme-queens-fleet-ci`],
      );
      expect(
        ours
          .map((l) =>
            l
              .filter((x) => typeof x === 'string')
              .slice(1)
              .join(' '),
          )
          .sort(),
      ).toEqual(expected.sort());
      for (const l of lines) expect((l.at(-1) as { stat?: string }).stat).toMatch(/^(Maximum|Minimum|Average|Sum)$/);
      expect(body.widgets.every((w) => w.type === 'metric' && w.width === 12)).toBe(true);
    },
  );

  it(
    'leaves the dashboard out when the dashboard parameter ' + "is false ($3 a month beyond an account's first three)",
    () => {
      expect(
        dashboardFragment({
          service: 's',
          stage: 'x',
          bucket: 'b',
          nodes: '[]',
          metrics: 'essential',
          dashboard: 'false',
        }),
      ).toEqual({ Resources: {} });
      expect(() =>
        dashboardFragment({ service: 's', stage: 'x', bucket: 'b', nodes: '[]', metrics: 'loud', dashboard: true }),
      ).toThrow(/metrics/);
    },
  );

  it('lets the watchdog change only the configured hosted zone', () => {
    const change = statements('WatchdogRole').find((s) =>
      asList(s.Action).includes('route53:ChangeResourceRecordSets'),
    );
    expect(sub(change?.Resource)).toBe('arn:${AWS::Partition}:route53:::hostedzone/Z0123456789ABC');
  });
});

describe('operator policies', () => {
  const policy = (id: string): Statement[] =>
    t.documentStatements(props(id).PolicyDocument as { Statement: unknown[] });
  /** The actions docs/security.md lists for a policy, in its bullet under "Operators". */
  const documented = (id: string): string[] => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
    const bullet = (doc.split('\n- ').find((p) => p.startsWith(`**${id}**`)) ?? '').split('\n\n')[0] ?? '';
    return [...new Set((bullet.match(/`[a-z0-9]+:[A-Za-z]+`/g) ?? []).map((a) => a.slice(1, -1)))].sort();
  };

  it.each(['ReadOnlyPolicy', 'OperatorPolicy'])(
    '%s allows exactly the actions docs/security.md lists, and the stack names it',
    (id) => {
      const actions = [...new Set(policy(id).flatMap((s) => asList(s.Action)))].sort();
      expect(actions.length).toBeGreaterThan(4);
      expect(actions).toEqual(documented(id));
      expect(policy(id).every((s) => s.Effect === 'Allow')).toBe(true);
      expect(Object.values(template.Outputs ?? {}).map((o) => o.Value)).toContainEqual({ Ref: id });
    },
  );

  it("reads with one and changes with the other, only the fleet's own records and nodes", () => {
    const readOnly = (r: Request): Decision => decide(policy('ReadOnlyPolicy'), r);
    const operator = (r: Request): Decision => decide(policy('OperatorPolicy'), r);
    const object = { resource: 'arn:aws:s3:::acme-queens-fleet-ci/peer-sync/events/x/PROMOTED.json' };
    const item = (action: string, key: string): Request => ({
      action,
      resource: 'ref:ControlTable.Arn',
      context: { 'dynamodb:LeadingKeys': key },
    });
    expect(readOnly({ action: 's3:GetObject', ...object })).toBe('allow');
    expect(readOnly({ action: 's3:PutObject', ...object })).toBe('implicit-deny');
    expect(operator({ action: 's3:PutObject', ...object })).toBe('allow');
    for (const decision of [readOnly, operator])
      expect(decision({ action: 's3:DeleteObject', ...object })).toBe('implicit-deny');
    expect(readOnly(item('dynamodb:GetItem', KEYS.beat('node-1')))).toBe('allow');
    expect(readOnly(item('dynamodb:UpdateItem', KEYS.leader))).toBe('implicit-deny');
    expect(operator(item('dynamodb:UpdateItem', KEYS.leader))).toBe('allow');
    expect(operator(item('dynamodb:UpdateItem', KEYS.beat('node-1')))).toBe('implicit-deny');
    const tagged = { 'ssm:resourceTag/queen-fleet': 'any' };
    const instance = 'arn:aws:ssm:us-west-2:123456789012:managed-instance/mi-00000000000000001';
    expect(readOnly({ action: 'ssm:SendCommand', resource: instance, context: tagged })).toBe('implicit-deny');
    expect(operator({ action: 'ssm:SendCommand', resource: instance, context: {} })).toBe('implicit-deny');
    const intake = { action: 'sqs:ReceiveMessage', resource: 'ref:IntakeQueue.Arn' };
    for (const decision of [readOnly, operator]) expect(decision(intake)).toBe('implicit-deny');
  });
});

describe('storage and delivery', () => {
  it('versions, encrypts and closes the state bucket to the public', () => {
    const bucket = props('StateBucket');
    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.BucketEncryption).toMatchObject({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it('refuses every request to the bucket that does not use TLS', () => {
    const [statement] = (props('StateBucketPolicy').PolicyDocument as { Statement: Statement[] }).Statement;
    expect(statement).toMatchObject({
      Effect: 'Deny',
      Principal: '*',
      Action: 's3:*',
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
    expect(statement?.Resource).toEqual([
      { 'Fn::GetAtt': ['StateBucket', 'Arn'] },
      { 'Fn::Sub': '${StateBucket.Arn}/*' },
    ]);
  });

  it('expires old artifacts, events, archives and versions', () => {
    const rules = (
      props('StateBucket').LifecycleConfiguration as {
        Rules: { Id: string; Prefix?: string; ExpirationInDays?: number }[];
      }
    ).Rules;
    expect(rules.map((r) => [r.Id, r.Prefix ?? '', r.ExpirationInDays ?? 0])).toEqual([
      ['noncurrent-versions', '', 0],
      ['old-artifacts', 'peer-sync/artifacts/', 7],
      ['old-events', 'peer-sync/events/', 90],
      ['old-archives', 'peer-sync/archive/', 365],
      ['old-quarantine', 'peer-sync/quarantine/', 30],
    ]);
  });

  it('calls the watchdog on heartbeat writes', () => {
    const notification = props('StateBucket').NotificationConfiguration as {
      LambdaConfigurations: { Function: unknown; Filter: unknown }[];
    };
    expect(notification.LambdaConfigurations).toEqual([
      {
        Event: 's3:ObjectCreated:*',
        Function: { 'Fn::GetAtt': ['WatchdogLambdaFunction', 'Arn'] },
        Filter: {
          S3Key: {
            Rules: [
              { Name: 'prefix', Value: 'peer-sync/nodes/' },
              { Name: 'suffix', Value: 'heartbeat.json' },
            ],
          },
        },
      },
    ]);
  });

  it(
    'dead-letters what no worker counted after maxReceiveCount ' +
      'receives (the backstop), more than an hour of outage can cost',
    () => {
      expect(props('TaskQueue').RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': ['DeadLetterQueue', 'Arn'] },
        maxReceiveCount: 150,
      });
      const visibilityTimeoutSeconds = props('TaskQueue').VisibilityTimeout as number;
      expect(150).toBeGreaterThanOrEqual(outageHourReceives({ ...buildConfig({}), visibilityTimeoutSeconds }));
      expect(props('TaskQueue').SqsManagedSseEnabled).toBe(true);
    },
  );

  it(
    "takes producers' work in an intake queue with no redrive (held input " +
      'never mixes with poison), which the watchdog alone admits from and watches',
    () => {
      expect(props('IntakeQueue')).toMatchObject({ MessageRetentionPeriod: 1209600, SqsManagedSseEnabled: true });
      expect(props('IntakeQueue').RedrivePolicy).toBeUndefined();
      const watchdog = statements('WatchdogRole');
      const on = (action: string): unknown[] =>
        watchdog
          .filter((st) => asList(st.Action).includes(action))
          .flatMap((st) => (Array.isArray(st.Resource) ? (st.Resource as unknown[]) : [st.Resource]));
      expect(on('sqs:ReceiveMessage')).toEqual([{ 'Fn::GetAtt': ['IntakeQueue', 'Arn'] }]);
      expect(on('sqs:DeleteMessage')).toEqual([{ 'Fn::GetAtt': ['IntakeQueue', 'Arn'] }]);
      expect(on('sqs:SendMessage')).toEqual([{ 'Fn::GetAtt': ['TaskQueue', 'Arn'] }]);
      // The dead-letter and notifier-failure queues' depths too: the
      // watchdog alerts every rise (DEAD_LETTERED, NOTIFIER_FAILED).
      expect(on('sqs:GetQueueAttributes')).toEqual([
        { 'Fn::GetAtt': ['TaskQueue', 'Arn'] },
        { 'Fn::GetAtt': ['IntakeQueue', 'Arn'] },
        { 'Fn::GetAtt': ['DeadLetterQueue', 'Arn'] },
        { 'Fn::GetAtt': ['NotifierFailureQueue', 'Arn'] },
      ]);
      // Nodes never touch intake; producers may only send to it.
      for (const role of NODE_ROLES) expect(JSON.stringify(statements(role))).not.toContain('IntakeQueue');
      const producer = (props('ProducerPolicy').PolicyDocument as { Statement: Statement[] }).Statement;
      expect(producer).toEqual([
        {
          Effect: 'Allow',
          Action: ['sqs:SendMessage', 'sqs:GetQueueUrl'],
          Resource: { 'Fn::GetAtt': ['IntakeQueue', 'Arn'] },
        },
      ]);
      // No alarm repeats the watchdog's DEAD_LETTERED, NOTIFIER_FAILED or
      // INPUT_WAITING: nothing in the stack watches those queues but the watchdog.
      expect(
        resources('AWS::CloudWatch::Alarm').filter(([, r]) =>
          /DeadLetterQueue|IntakeQueue|NotifierLambdaFunction|AWS\/SQS/.test(JSON.stringify(r)),
        ),
      ).toEqual([]);
      const env = (props('WatchdogLambdaFunction').Environment as { Variables: Record<string, unknown> }).Variables;
      expect(env).toMatchObject({
        FLEET_INTAKE_QUEUE_URL: { Ref: 'IntakeQueue' },
        FLEET_ADMISSION_HIGH_MARK: '50',
        FLEET_ADMISSION_LOW_MARK: '10',
        FLEET_NOTIFIER_FAILURE_QUEUE_URL: { Ref: 'NotifierFailureQueue' },
        FLEET_INTAKE_WAIT_ALERT_SECONDS: '3600',
      });
    },
  );

  it(
    "keeps the watchdog's word that Slack failed out of Slack " +
      '(it goes to email), so a broken webhook cannot feed a loop',
    () => {
      const subscriptions = resources('AWS::SNS::Subscription').map(([, r]) => r.Properties);
      const toNotifier = subscriptions.filter((p) => JSON.stringify(p.Endpoint).includes('NotifierLambdaFunction'));
      expect(toNotifier).toHaveLength(1);
      expect(toNotifier[0]?.FilterPolicy).toEqual({ kind: [{ 'anything-but': ['NOTIFIER_FAILED'] }] });
    },
  );

  it(
    'runs the watchdog on a schedule whose period its function ' +
      'is told (how far apart runs may be: unseenIntervals)',
    () => {
      const rules = resources('AWS::Events::Rule').map(([, r]) => r.Properties);
      expect(rules.map((r) => r.ScheduleExpression)).toEqual(['rate(1 minute)']);
      const minutes = Number(/^rate\((\d+) minutes?\)$/.exec(String(rules[0]?.ScheduleExpression))?.[1]);
      const env = (props('WatchdogLambdaFunction').Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Number(env.FLEET_WATCHDOG_SCHEDULE_SECONDS)).toBe(minutes * 60);
      expect(buildConfig({}, {}).watchdogScheduleSeconds).toBe(minutes * 60);
      // bench/watchdog-cost.ts prices its runs at this size.
      expect(props('WatchdogLambdaFunction').MemorySize).toBe(128);
    },
  );

  it(
    'alarms on watchdog errors and on a watchdog that stopped running, ' +
      'and on nothing else the watchdog could watch',
    () => {
      const alarms = Object.fromEntries(resources('AWS::CloudWatch::Alarm').map(([id, r]) => [id, r.Properties]));
      expect(
        Object.keys(alarms)
          .filter((id) => !id.startsWith('MetricAlarm'))
          .sort(),
      ).toEqual(['WatchdogErrorsAlarm', 'WatchdogMissingRunAlarm']);
      expect(alarms.WatchdogErrorsAlarm).toMatchObject({
        MetricName: 'Errors',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        AlarmActions: [{ Ref: 'AlertTopic' }],
      });
      expect(alarms.WatchdogMissingRunAlarm).toMatchObject({
        MetricName: 'Invocations',
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
        TreatMissingData: 'breaching',
        AlarmActions: [{ Ref: 'AlertTopic' }],
      });
    },
  );

  it(
    "alarms on the fleet's metrics: no ready standby, " +
      'and a stall left open and an old heartbeat for each node, to the alert topic',
    () => {
      const alarms = Object.fromEntries(
        resources('AWS::CloudWatch::Alarm')
          .filter(([id]) => id.startsWith('MetricAlarm'))
          .map(([id, r]) => [id, r.Properties]),
      );
      // Every node, the one configured by name alone too.
      expect(Object.keys(alarms).sort()).toEqual([
        'MetricAlarmHeartbeatNode1',
        'MetricAlarmHeartbeatNode2',
        'MetricAlarmHeartbeatNode3',
        'MetricAlarmNoReadyStandby',
        'MetricAlarmStallOpenNode1',
        'MetricAlarmStallOpenNode2',
        'MetricAlarmStallOpenNode3',
      ]);
      expect(alarms.MetricAlarmNoReadyStandby).toMatchObject({
        AlarmName: 'queens-fleet-ci-no-ready-standby',
        Namespace: METRICS_NAMESPACE,
        MetricName: 'ReadyStandbys',
        Dimensions: [{ Name: 'Fleet', Value: 'acme-queens-fleet-ci' }],
        Statistic: 'Maximum',
        Period: 300,
        EvaluationPeriods: 2,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
      });
      expect(alarms.MetricAlarmStallOpenNode2).toMatchObject({
        MetricName: 'FailingSamples',
        Dimensions: [
          { Name: 'Fleet', Value: 'acme-queens-fleet-ci' },
          { Name: 'Node', Value: 'node-2' },
        ],
        Statistic: 'Minimum',
        Threshold: 8,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(alarms.MetricAlarmHeartbeatNode1).toMatchObject({
        MetricName: 'HeartbeatAge',
        Dimensions: [
          { Name: 'Fleet', Value: 'acme-queens-fleet-ci' },
          { Name: 'Node', Value: 'node-1' },
        ],
        Statistic: 'Minimum',
        Threshold: 120,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      for (const a of Object.values(alarms))
        expect(a).toMatchObject({
          TreatMissingData: 'missing',
          AlarmActions: [{ Ref: 'AlertTopic' }],
          OKActions: [{ Ref: 'AlertTopic' }],
          AlarmDescription: expect.stringMatching(/ Dashboard panel "[^"]+"\. Runbook: \S+$/),
        });
    },
  );

  it("ends every alarm's description with a link to its runbook row, which the page has and Slack reads", () => {
    const anchors = anchorsOf(join(__dirname, '../../docs/runbook.md'));
    const alarms = resources('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(2);
    const links = alarms.map(([id, r]) => {
      const description = String(r.Properties.AlarmDescription);
      const link = ` Runbook: ${CI_PARAMS.runbookUrl}#`;
      const at = description.lastIndexOf(link);
      const anchor = at < 0 ? '' : description.slice(at + link.length);
      return [id, anchor, anchors.has(anchor), alarmAnchorIn(description) === anchor];
    });
    expect(links.filter(([, anchor, onPage, read]) => anchor === '' || !onPage || !read)).toEqual([]);
  });

  it('gives every function the runbook its alerts link', () => {
    const env = (fn: string): Record<string, unknown> =>
      (props(`${fn}LambdaFunction`).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env('Watchdog').FLEET_RUNBOOK_URL).toBe(CI_PARAMS.runbookUrl);
    expect(env('Replay').FLEET_RUNBOOK_URL).toBe(CI_PARAMS.runbookUrl);
    expect(env('Notifier').RUNBOOK_URL).toBe(CI_PARAMS.runbookUrl);
  });

  it('keeps an alert Slack never took in a failure queue', () => {
    expect(props('NotifierInvokeConfig')).toEqual({
      FunctionName: { Ref: 'NotifierLambdaFunction' },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': ['NotifierFailureQueue', 'Arn'] } } },
    });
  });

  it('sends alerts to email and to the Slack notifier', () => {
    const subs = resources('AWS::SNS::Subscription').map(([, r]) => r.Properties);
    expect(subs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: 'AlertTopic' } }),
        expect.objectContaining({
          Protocol: 'lambda',
          Endpoint: { 'Fn::GetAtt': ['NotifierLambdaFunction', 'Arn'] },
          TopicArn: { Ref: 'AlertTopic' },
        }),
      ]),
    );
  });
});
