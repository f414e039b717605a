import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CI_PARAMS, packageTemplate, ROOT, type Resource, type Statement, type Template } from './packaged';
import { decide, PSEUDO, type Request } from './policy-eval';

/**
 * examples/deployer-policy.json against the stack packaged with every option: each resource's
 * create call, on the name CloudFormation gives it, must be allowed, and a resource type the
 * test does not know fails it, so the policy is looked at again when the stack grows. (Which
 * calls CloudFormation makes beyond the create is AWS's business; docs/deploy.md says so.)
 */
const policy = JSON.parse(readFileSync(join(ROOT, 'examples/deployer-policy.json'), 'utf8')) as {
  Statement: Statement[];
};
const { 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT } = PSEUDO;
const STACK = 'queens-fleet-ci';

let template: Template;
beforeAll(() => {
  ({ template } = packageTemplate('package-deployer-test', CI_PARAMS));
}, 240_000);

/** The name a resource gets: its own name property, else CloudFormation's `<stack>-<logical id>-<suffix>`. */
const nameOf = (id: string, key: string): string => {
  const value = template.Resources[id]?.Properties[key];
  if (typeof value === 'string') return value;
  const generated = `${STACK}-${id}-1A2B3C4D5E6F`;
  return template.Resources[id]?.Type === 'AWS::S3::Bucket' ? generated.toLowerCase() : generated;
};
/** The resource a Ref or GetAtt names. */
const target = (value: unknown): string => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  const id = v.Ref ?? v['Fn::GetAtt']?.[0];
  if (id === undefined) throw new Error(`not a reference: ${JSON.stringify(value)}`);
  return id;
};

const arn = (service: string, rest: string, region: string = REGION): string =>
  `arn:aws:${service}:${region}:${ACCOUNT}:${rest}`;
const fn = (id: string): string => arn('lambda', `function:${nameOf(id, 'FunctionName')}`);
const queue = (id: string): string => arn('sqs', nameOf(id, 'QueueName'));
const topic = (id: string): string => arn('sns', nameOf(id, 'TopicName'));
const bucket = (id: string): string => `arn:aws:s3:::${nameOf(id, 'BucketName')}`;

/** What creating one resource asks of the deployer. */
const needs = (id: string, r: Resource): Request[] => {
  const p = r.Properties;
  const ask = (action: string, resource: string): Request => ({ action, resource });
  switch (r.Type) {
    case 'AWS::Lambda::Function':
      return [ask('lambda:CreateFunction', fn(id)), ask('lambda:UpdateFunctionCode', fn(id))];
    case 'AWS::Lambda::LayerVersion':
      return [ask('lambda:PublishLayerVersion', arn('lambda', `layer:${nameOf(id, 'LayerName')}`))];
    case 'AWS::Lambda::Version':
      return [ask('lambda:PublishVersion', fn(target(p.FunctionName)))];
    case 'AWS::Lambda::Permission':
      return [ask('lambda:AddPermission', fn(target(p.FunctionName)))];
    case 'AWS::Lambda::EventInvokeConfig':
      return [ask('lambda:PutFunctionEventInvokeConfig', fn(target(p.FunctionName)))];
    case 'AWS::IAM::Role': {
      const role = `arn:aws:iam::${ACCOUNT}:role/${nameOf(id, 'RoleName')}`;
      return [ask('iam:CreateRole', role), ask('iam:PutRolePolicy', role), ask('iam:PassRole', role)];
    }
    case 'AWS::IAM::ManagedPolicy':
      return [ask('iam:CreatePolicy', `arn:aws:iam::${ACCOUNT}:policy/${nameOf(id, 'ManagedPolicyName')}`)];
    case 'AWS::SQS::Queue':
      return [ask('sqs:CreateQueue', queue(id))];
    case 'AWS::SQS::QueuePolicy':
      return (p.Queues as unknown[]).map((q) => ask('sqs:SetQueueAttributes', queue(target(q))));
    case 'AWS::DynamoDB::Table':
      return [ask('dynamodb:CreateTable', arn('dynamodb', `table/${nameOf(id, 'TableName')}`))];
    case 'AWS::SNS::Topic':
      return [ask('sns:CreateTopic', topic(id))];
    case 'AWS::SNS::TopicPolicy':
      return (p.Topics as unknown[]).map((t) => ask('sns:SetTopicAttributes', topic(target(t))));
    case 'AWS::SNS::Subscription':
      return [ask('sns:Subscribe', topic(target(p.TopicArn)))];
    case 'AWS::S3::Bucket':
      return [ask('s3:CreateBucket', bucket(id)), ask('s3:PutObject', `${bucket(id)}/serverless/x.zip`)];
    case 'AWS::S3::BucketPolicy':
      return [ask('s3:PutBucketPolicy', bucket(target(p.Bucket)))];
    case 'AWS::Events::Rule':
      return [ask('events:PutRule', arn('events', `rule/${nameOf(id, 'Name')}`))];
    case 'AWS::Logs::LogGroup':
      return [ask('logs:CreateLogGroup', arn('logs', `log-group:${nameOf(id, 'LogGroupName')}`))];
    case 'AWS::CloudWatch::Alarm':
      return [ask('cloudwatch:PutMetricAlarm', arn('cloudwatch', `alarm:${nameOf(id, 'AlarmName')}`))];
    case 'AWS::CloudWatch::Dashboard':
      return [ask('cloudwatch:PutDashboard', arn('cloudwatch', `dashboard/${nameOf(id, 'DashboardName')}`, ''))];
    case 'AWS::Route53::RecordSet':
      return [ask('route53:ChangeResourceRecordSets', `arn:aws:route53:::hostedzone/${String(p.HostedZoneId)}`)];
    case 'AWS::Route53::HealthCheck':
      return [ask('route53:CreateHealthCheck', '*')];
    case 'AWS::CloudFront::Distribution':
      return [ask('cloudfront:CreateDistribution', '*')];
    case 'AWS::CloudFront::OriginAccessControl':
      return [ask('cloudfront:CreateOriginAccessControl', '*')];
    default:
      throw new Error(
        `${id}: ${r.Type} is new to examples/deployer-policy.json: grant what it needs, then add it here`,
      );
  }
};

describe('the deployer policy (examples/deployer-policy.json)', () => {
  it('allows creating every resource of the stack, under the names CloudFormation gives them', () => {
    const refused = Object.entries(template.Resources)
      .flatMap(([id, r]) => needs(id, r).map((q) => ({ id, ...q })))
      .filter((q) => decide(policy.Statement, q) !== 'allow');
    expect(refused).toEqual([]);
    const stack = arn('cloudformation', `stack/${STACK}/0f3e1d20-0000-0000-0000-000000000000`);
    for (const action of ['cloudformation:CreateChangeSet', 'cloudformation:ExecuteChangeSet'])
      expect(decide(policy.Statement, { action, resource: stack })).toBe('allow');
  });

  it('allows the steps around the deploy: instances, zone lookup, Slack webhook, fleet init and enroll', () => {
    const role = `arn:aws:iam::${ACCOUNT}:role/queens-fleet-node-ci-${REGION}-node-1`;
    const steps: Request[] = [
      { action: 'lightsail:CreateInstances', resource: '*' },
      { action: 'lightsail:AllocateStaticIp', resource: '*' },
      { action: 'lightsail:AttachStaticIp', resource: '*' },
      { action: 'lightsail:StopInstance', resource: '*' },
      { action: 'route53:ListHostedZonesByName', resource: '*' },
      { action: 'ssm:PutParameter', resource: arn('ssm', 'parameter/queens-fleet/ci/slack-webhook-url') },
      { action: 'cloudformation:DescribeStacks', resource: arn('cloudformation', `stack/${STACK}/1`) },
      { action: 'ssm:CreateActivation', resource: '*' },
      { action: 'ssm:AddTagsToResource', resource: '*' },
      { action: 'iam:PassRole', resource: role },
    ];
    expect(steps.filter((q) => decide(policy.Statement, q) !== 'allow')).toEqual([]);
  });

  it("grants nothing outside the fleet's names: not another stack, role, function, table or bucket", () => {
    const outside: Request[] = [
      { action: 'cloudformation:DeleteStack', resource: arn('cloudformation', 'stack/billing/1') },
      { action: 'iam:CreateRole', resource: `arn:aws:iam::${ACCOUNT}:role/admin` },
      { action: 'iam:PassRole', resource: `arn:aws:iam::${ACCOUNT}:role/OrganizationAccountAccessRole` },
      { action: 'iam:CreateUser', resource: `arn:aws:iam::${ACCOUNT}:user/queens-fleet-x` },
      { action: 'lambda:UpdateFunctionCode', resource: arn('lambda', 'function:payments') },
      { action: 'dynamodb:DeleteTable', resource: arn('dynamodb', 'table/orders') },
      { action: 's3:DeleteBucket', resource: 'arn:aws:s3:::company-backups' },
      { action: 'sqs:DeleteQueue', resource: arn('sqs', 'orders') },
    ];
    for (const q of outside)
      expect({ ...q, decision: decide(policy.Statement, q) }).toMatchObject({ decision: 'implicit-deny' });
    expect(policy.Statement.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))).not.toContain('*');
  });
});
