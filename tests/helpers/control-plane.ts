import { ChangeResourceRecordSetsCommand, GetChangeCommand, ListResourceRecordSetsCommand, type Route53ClientResolvedConfig, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-route-53';
import type { AwsStub } from 'aws-sdk-client-mock';

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

/** Route 53 answering as for a record pointing at node-1, whose changes go INSYNC at once. */
export const mockOriginRecord = (r53: AwsStub<ServiceInputTypes, ServiceOutputTypes, Route53ClientResolvedConfig>): void => {
  r53.on(ListResourceRecordSetsCommand).resolves({ ResourceRecordSets: [{ Name: 'origin.example.com.', Type: 'A', TTL: 60, ResourceRecords: [{ Value: '192.0.2.1' }] }] });
  r53.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: '/change/C1', Status: 'PENDING', SubmittedAt: new Date() } });
  r53.on(GetChangeCommand).resolves({ ChangeInfo: { Id: '/change/C1', Status: 'INSYNC', SubmittedAt: new Date() } });
};
