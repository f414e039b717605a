/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, as lib/aws/sdk.ts does */
import type * as CloudFormation from '@aws-sdk/client-cloudformation';
import type * as SSM from '@aws-sdk/client-ssm';

/**
 * The SDK names only the setup commands (`fleet init`, `fleet enroll`) use, run from an
 * operator's machine and never by a function or a node: kept out of SDK_EXPORTS, so the
 * functions' layer does not carry them.
 */
export const SETUP_SDK_EXPORTS = {
  '@aws-sdk/client-cloudformation': ['CloudFormationClient', 'DescribeStacksCommand'],
  '@aws-sdk/client-ssm': ['SSMClient', 'CreateActivationCommand'],
} as const;

type Setup = typeof SETUP_SDK_EXPORTS;
type Taken<P extends keyof Setup, M> = Pick<M, Setup[P][number] & keyof M>;

export const setupSdk = {
  cloudformation: (): Taken<'@aws-sdk/client-cloudformation', typeof CloudFormation> =>
    require('@aws-sdk/client-cloudformation') as typeof CloudFormation,
  ssm: (): Taken<'@aws-sdk/client-ssm', typeof SSM> => require('@aws-sdk/client-ssm') as typeof SSM,
};
