import { ValidationError } from '../../../lib/core/errors';
import { configFromOutputs } from '../../../lib/core/stack-config';

const BASE = {
  StateBucketName: 'b-prod',
  ControlTableName: 't-prod',
  TaskQueueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/tasks',
};

describe('configFromOutputs', () => {
  it('takes the origin record when the stack has one', () => {
    const { file, missing } = configFromOutputs(
      { ...BASE, HostedZoneId: 'Z0123', OriginRecordName: 'origin.example.com', FleetNodes: '[]' },
      'us-west-2',
    );
    expect(file).toMatchObject({ hostedZoneId: 'Z0123', recordName: 'origin.example.com', nodes: [] });
    expect(missing).not.toContain('HostedZoneId');
  });

  it('refuses outputs of another kind of stack', () => {
    expect(() => configFromOutputs({ TaskQueueUrl: BASE.TaskQueueUrl }, 'us-west-2')).toThrow(ValidationError);
  });

  it('refuses outputs the config would refuse, naming the key', () => {
    expect(() => configFromOutputs({ ...BASE, StateBucketName: 'Not_A_Bucket' }, 'us-west-2')).toThrow(/bucket/);
  });
});
