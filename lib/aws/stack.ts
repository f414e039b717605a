import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { FleetError, ValidationError } from '../core/errors';
import { toFleetError } from './errors';
import { setupSdk } from './setup-sdk';

/** A stack's outputs by key (DescribeStacks); a stack that does not exist is a ValidationError naming it. */
export const readStackOutputs = async (
  cfn: CloudFormationClient,
  stackName: string,
  region: string,
): Promise<Record<string, string>> => {
  let stacks;
  try {
    stacks = (await cfn.send(new (setupSdk.cloudformation().DescribeStacksCommand)({ StackName: stackName }))).Stacks;
  } catch (error) {
    // CloudFormation answers a missing stack with a ValidationError "Stack with id … does not exist".
    if (/does not exist/.test((error as Error).message ?? ''))
      throw new ValidationError(
        `stack ${stackName} not found in ${region}: deploy it (npx sls deploy --stage …), or pass --region`,
        '--stack',
      );
    throw toFleetError(error, `CloudFormation DescribeStacks ${stackName}`);
  }
  const stack = stacks?.[0];
  if (stack === undefined) throw new FleetError(`CloudFormation DescribeStacks ${stackName}: no stack returned`);
  return Object.fromEntries(
    (stack.Outputs ?? []).flatMap((o) =>
      o.OutputKey === undefined || o.OutputValue === undefined ? [] : [[o.OutputKey, o.OutputValue]],
    ),
  );
};

/** What CreateActivation is asked for one node (lib/core/enroll.ts builds it). */
export interface ActivationRequest {
  IamRole: string;
  DefaultInstanceName: string;
  Description: string;
  RegistrationLimit: number;
  ExpirationDate: Date;
  Tags: { Key: string; Value: string }[];
}

/** Creates one SSM hybrid activation; its code is shown only once. */
export const createActivation = async (
  ssm: SSMClient,
  request: ActivationRequest,
): Promise<{ activationId: string; activationCode: string }> => {
  try {
    const out = await ssm.send(new (setupSdk.ssm().CreateActivationCommand)(request));
    if (out.ActivationId === undefined || out.ActivationCode === undefined)
      throw new FleetError('SSM CreateActivation returned no ActivationId or ActivationCode');
    return { activationId: out.ActivationId, activationCode: out.ActivationCode };
  } catch (error) {
    throw toFleetError(error, `SSM CreateActivation with role ${request.IamRole}`);
  }
};
