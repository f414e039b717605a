import { checkTemplate, type SpecLookup } from '../../../lib/deploy/check';
import { createSpecLookup } from '../../../lib/deploy/spec';
import { problem } from './fake-spec';

describe('checkTemplate with the real CloudFormation spec', () => {
  let spec: SpecLookup;
  beforeAll(() => {
    spec = createSpecLookup();
    spec.resource('AWS::S3::Bucket'); // loads the database once, outside the tests' own time
  });

  /** A small, valid stack in the style serverless emits; each test breaks one thing. */
  const stack = (): Record<string, Record<string, Record<string, unknown>>> => ({
    Conditions: { IsProd: { 'Fn::Equals': [{ Ref: 'AWS::StackName' }, 'fleet-prod'] } },
    Resources: {
      DeadLetters: { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: '1209600' } },
      Jobs: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          VisibilityTimeout: 60,
          RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['DeadLetters', 'Arn'] }, maxReceiveCount: 5 },
        },
      },
      Alerts: {
        Type: 'AWS::SNS::Topic',
        Properties: { TopicName: 'fleet-events', Tags: [{ Key: 'team', Value: 'media' }] },
      },
      AlertsByMail: {
        Type: 'AWS::SNS::Subscription',
        Properties: { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: 'Alerts' } },
      },
      Role: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] },
            ],
          },
          Policies: [
            {
              PolicyName: 'fleet',
              PolicyDocument: {
                Statement: [
                  {
                    Effect: 'Allow',
                    Action: ['sqs:*'],
                    Resource: { 'Fn::GetAtt': 'Jobs.Arn' },
                    Condition: { Bool: { 'aws:SecureTransport': 'true' } },
                  },
                ],
              },
            },
          ],
        },
      },
      Watchdog: {
        Type: 'AWS::Lambda::Function',
        DependsOn: ['Role'],
        Properties: {
          Code: { ZipFile: 'exports.handler = async () => {}' },
          Role: { 'Fn::GetAtt': ['Role', 'Arn'] },
          Runtime: 'nodejs22.x',
          MemorySize: '256',
          Timeout: 45,
          Environment: {
            Variables: {
              TOPIC: { Ref: 'Alerts' },
              QUEUE: { 'Fn::Sub': ['${Url}?stack=${AWS::StackName}', { Url: { 'Fn::GetAtt': ['Jobs', 'QueueUrl'] } }] },
            },
          },
        },
      },
      State: {
        Type: 'AWS::S3::Bucket',
        Properties: {
          VersioningConfiguration: { 'Fn::If': ['IsProd', { Status: 'Enabled' }, { Ref: 'AWS::NoValue' }] },
        },
      },
    },
    Outputs: {
      JobsArn: { Value: { 'Fn::GetAtt': ['Jobs', 'Arn'] }, Export: { Name: { 'Fn::Sub': '${AWS::StackName}-jobs' } } },
    },
  });

  it(
    'passes a valid stack: numeric strings, json policies, ' +
      'Fn::If with AWS::NoValue, Fn::Sub variables, real attributes',
    () => {
      expect(checkTemplate(stack(), spec)).toEqual([]);
    },
  );

  it.each([
    [
      'an unknown resource type',
      (t: ReturnType<typeof stack>) => {
        t.Resources.Jobs.Type = 'AWS::SQS::Queues';
      },
      problem('Resources.Jobs.Type', /unknown resource type AWS::SQS::Queues/),
    ],
    [
      'an unknown top-level property',
      (t: ReturnType<typeof stack>) => {
        t.Resources.Alerts.Properties = { TopicNme: 'x' };
      },
      problem('Resources.Alerts.Properties.TopicNme', /unknown property TopicNme of AWS::SNS::Topic/),
    ],
    [
      'an unknown nested property',
      (t: ReturnType<typeof stack>) => {
        t.Resources.State.Properties = { VersioningConfiguration: { Status: 'Enabled', MfaDelete: 'Enabled' } };
      },
      problem(
        'Resources.State.Properties.VersioningConfiguration.MfaDelete',
        /unknown property MfaDelete of VersioningConfiguration/,
      ),
    ],
    [
      'a value outside the allowed ones',
      (t: ReturnType<typeof stack>) => {
        t.Resources.State.Properties = { VersioningConfiguration: { Status: 'enabled' } };
      },
      problem(
        'Resources.State.Properties.VersioningConfiguration.Status',
        /"enabled" is not one of Enabled, Suspended/,
      ),
    ],
    [
      'an object for an integer',
      (t: ReturnType<typeof stack>) => {
        t.Resources.Jobs.Properties = { VisibilityTimeout: { seconds: 60 } };
      },
      problem('Resources.Jobs.Properties.VisibilityTimeout', /expected an integer, got an object/),
    ],
    [
      'a missing required property',
      (t: ReturnType<typeof stack>) => {
        delete (t.Resources.AlertsByMail.Properties as Record<string, unknown>).Protocol;
      },
      problem(
        'Resources.AlertsByMail.Properties.Protocol',
        /missing required property Protocol of AWS::SNS::Subscription/,
      ),
    ],
    [
      'a tag without a Value',
      (t: ReturnType<typeof stack>) => {
        t.Resources.Alerts.Properties = { Tags: [{ Key: 'team' }] };
      },
      problem('Resources.Alerts.Properties.Tags.0.Value', /missing required property Value of Tag/),
    ],
    [
      'a required property removed by AWS::NoValue',
      (t: ReturnType<typeof stack>) => {
        (t.Resources.AlertsByMail.Properties as Record<string, unknown>).Protocol = { Ref: 'AWS::NoValue' };
      },
      problem(
        'Resources.AlertsByMail.Properties.Protocol',
        /missing required property Protocol of AWS::SNS::Subscription \(Ref AWS::NoValue removes it\)/,
      ),
    ],
    [
      'a bucket that depends on the permission that reads its Arn',
      (t: ReturnType<typeof stack>) => {
        t.Resources.State.DependsOn = 'StatePermission';
        t.Resources.StatePermission = {
          Type: 'AWS::Lambda::Permission',
          Properties: {
            Action: 'lambda:InvokeFunction',
            FunctionName: { 'Fn::GetAtt': ['Watchdog', 'Arn'] },
            Principal: 's3.amazonaws.com',
            SourceArn: { 'Fn::GetAtt': 'State.Arn' },
          },
        };
      },
      problem('Resources.State', /^dependency cycle State → StatePermission → State$/),
    ],
    [
      'a subscription created only in prod to a topic used everywhere',
      (t: ReturnType<typeof stack>) => {
        t.Resources.Alerts.Condition = 'IsProd';
        t.Resources.AlertsByMail.Condition = 'IsProd';
      },
      problem(
        'Resources.Watchdog.Properties.Environment.Variables.TOPIC.Ref',
        /Alerts exists only when condition IsProd is true, but Watchdog has no Condition/,
      ),
    ],
    [
      'an attribute the queue does not have',
      (t: ReturnType<typeof stack>) => {
        t.Outputs.JobsArn.Value = { 'Fn::GetAtt': ['Jobs', 'Url'] };
      },
      problem('Outputs.JobsArn.Value.Fn::GetAtt', /Jobs \(AWS::SQS::Queue\) has no attribute Url/),
    ],
  ])('reports %s', (_name, breakIt, expected) => {
    const template = stack();
    breakIt(template);
    expect(checkTemplate(template, spec)).toEqual([expected]);
  });
});
