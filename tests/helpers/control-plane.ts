import { GetInstanceStateCommand, LightsailClient } from '@aws-sdk/client-lightsail';
import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type Route53ClientResolvedConfig,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-route-53';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type InstanceInformation,
} from '@aws-sdk/client-ssm';
import { mockClient, type AwsStub } from 'aws-sdk-client-mock';
import type { MemoryS3 } from './memory-s3';

/** Two nodes with Lightsail names and addresses, as the watchdog's and replay's tests use them. */
export const ROUTED_NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', lightsailName: 'fleet-1', priority: 1, address: '192.0.2.1' },
  { name: 'node-2', instanceId: 'mi-00000000000000002', lightsailName: 'fleet-2', priority: 2, address: '192.0.2.2' },
];

/** The environment of a function that moves the origin record (FLEET_* as in serverless.yml). */
export const routedFleetEnv = (nodes: unknown = ROUTED_NODES): Record<string, string> => ({
  FLEET_BUCKET: 'state-bucket',
  FLEET_TOPIC_ARN: 'arn:aws:sns:us-west-2:123456789012:fleet-events',
  FLEET_NODES: JSON.stringify(nodes),
  FLEET_HOSTED_ZONE_ID: 'ZTEST',
  FLEET_RECORD_NAME: 'origin.example.com',
  FLEET_COMMAND_WAIT_SECONDS: '0.2',
});

/** Route 53 answering as for a record pointing at node-1 until a change moves it; changes go INSYNC at once. */
export const mockOriginRecord = (
  r53: AwsStub<ServiceInputTypes, ServiceOutputTypes, Route53ClientResolvedConfig>,
): void => {
  let value = '192.0.2.1';
  r53.on(ListResourceRecordSetsCommand).callsFake(() => ({
    ResourceRecordSets: [{ Name: 'origin.example.com.', Type: 'A', TTL: 60, ResourceRecords: [{ Value: value }] }],
  }));
  r53
    .on(ChangeResourceRecordSetsCommand)
    .callsFake(
      (input: { ChangeBatch?: { Changes?: { ResourceRecordSet?: { ResourceRecords?: { Value?: string }[] } }[] } }) => {
        value = input.ChangeBatch?.Changes?.[0]?.ResourceRecordSet?.ResourceRecords?.[0]?.Value ?? value;
        return { ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: new Date() } };
      },
    );
  r53.on(GetChangeCommand).resolves({ ChangeInfo: { Id: '/change/C1', Status: 'INSYNC', SubmittedAt: new Date() } });
};

/** Mocks of every service the watchdog and the replay call besides S3 (see MemoryS3). */
export const mockControlPlane = () => {
  const ssm = mockClient(SSMClient);
  const sns = mockClient(SNSClient);
  const r53 = mockClient(Route53Client);
  const lightsail = mockClient(LightsailClient);
  return { ssm, sns, r53, lightsail, all: [ssm, sns, r53, lightsail] as const };
};
export type ControlPlane = ReturnType<typeof mockControlPlane>;

/**
 * Resets the mocks to an AWS that cooperates: every command gets an id and succeeds, alerts
 * publish, the origin record moves; Lightsail and the SSM ping say what the case needs.
 */
export const answerControlPlane = (
  cp: ControlPlane,
  probe: { instance: string; ping: InstanceInformation[] },
): void => {
  for (const m of cp.all) m.reset();
  let n = 0;
  cp.ssm.on(SendCommandCommand).callsFake(() => ({ Command: { CommandId: `cmd-${++n}` } }));
  cp.ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Success' });
  cp.ssm.on(DescribeInstanceInformationCommand).resolves({ InstanceInformationList: probe.ping });
  cp.lightsail.on(GetInstanceStateCommand).resolves({ state: { name: probe.instance } });
  cp.sns.on(PublishCommand).resolves({ MessageId: 'm' });
  mockOriginRecord(cp.r53);
};

/** Every call that changes something, anywhere: what a dry run must never make. */
export const mutations = (s3: MemoryS3, cp: ControlPlane): string[] => [
  ...s3.puts.map((p) => `PUT ${p.key}`),
  ...cp.ssm.commandCalls(SendCommandCommand).map((c) => `SSM ${c.args[0].input.Parameters?.commands?.[0] ?? ''}`),
  ...cp.sns.commandCalls(PublishCommand).map(() => 'SNS Publish'),
  ...cp.r53.commandCalls(ChangeResourceRecordSetsCommand).map(() => 'Route53 change'),
];
