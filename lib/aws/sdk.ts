/* eslint-disable @typescript-eslint/no-require-imports -- loading on first use is the point of this module */
import type * as DynamoDB from '@aws-sdk/client-dynamodb';
import type * as Lambda from '@aws-sdk/client-lambda';
import type * as Lightsail from '@aws-sdk/client-lightsail';
import type * as Route53 from '@aws-sdk/client-route-53';
import type * as S3 from '@aws-sdk/client-s3';
import type * as SNS from '@aws-sdk/client-sns';
import type * as SQS from '@aws-sdk/client-sqs';
import type * as SSM from '@aws-sdk/client-ssm';
import type * as Credentials from '@aws-sdk/credential-providers';

/**
 * The AWS SDK's packages, each loaded on its first use rather than when a process starts. A
 * client package is 30–200 KiB of minified code that builds its endpoint rules and schemas when
 * evaluated: a healthy watchdog run needs S3 and SQS only, the notifier SSM only, an agent never
 * Route 53 or Lightsail; the rest would only lengthen every cold start and sit in memory
 * (`bench/footprint.ts`). Bundled, each `require` becomes a wrapper esbuild evaluates on first
 * call; types come from `import type`, which costs nothing at run time.
 */
/**
 * Every SDK package the fleet's code loads, and every name it takes from each: the Lambda layer
 * carries exactly these (lib/deploy/sdk-layer.ts), and no more of a package than these names
 * need (a client package holds every operation of its service; the fleet sends 1 to 8 of them).
 * `sdk` below hands out these names only, so the compiler refuses a name the layer would not
 * have; `tests/lib/aws/sdk.test.ts` holds the direct imports from `@aws-sdk/*` to the list.
 */
export const SDK_EXPORTS = {
  '@aws-sdk/client-s3': [
    'S3Client',
    'GetObjectCommand',
    'PutObjectCommand',
    'HeadObjectCommand',
    'ListObjectsV2Command',
  ],
  '@aws-sdk/client-sqs': [
    'SQSClient',
    'ReceiveMessageCommand',
    'SendMessageCommand',
    'SendMessageBatchCommand',
    'DeleteMessageCommand',
    'DeleteMessageBatchCommand',
    'ChangeMessageVisibilityCommand',
    'GetQueueAttributesCommand',
  ],
  '@aws-sdk/client-dynamodb': ['DynamoDBClient', 'GetItemCommand', 'UpdateItemCommand'],
  '@aws-sdk/client-sns': ['SNSClient', 'PublishCommand'],
  '@aws-sdk/client-ssm': [
    'SSMClient',
    'SendCommandCommand',
    'GetCommandInvocationCommand',
    'ListCommandsCommand',
    'CancelCommandCommand',
    'GetParameterCommand',
    'DescribeInstanceInformationCommand',
  ],
  '@aws-sdk/client-lightsail': ['LightsailClient', 'GetInstanceStateCommand'],
  '@aws-sdk/client-route-53': [
    'Route53Client',
    'ChangeResourceRecordSetsCommand',
    'GetChangeCommand',
    'ListResourceRecordSetsCommand',
  ],
  '@aws-sdk/client-lambda': ['LambdaClient', 'InvokeCommand'],
  '@aws-sdk/credential-providers': ['fromIni'],
  // The worker's artifact uploads (lib/aws/artifacts.ts): multipart for large files.
  '@aws-sdk/lib-storage': ['Upload'],
} as const;

export type SdkPackage = keyof typeof SDK_EXPORTS;
type Taken<P extends SdkPackage, M> = Pick<M, (typeof SDK_EXPORTS)[P][number] & keyof M>;

export const SDK_PACKAGES = Object.keys(SDK_EXPORTS) as SdkPackage[];

export const sdk = {
  s3: (): Taken<'@aws-sdk/client-s3', typeof S3> => require('@aws-sdk/client-s3') as typeof S3,
  sqs: (): Taken<'@aws-sdk/client-sqs', typeof SQS> => require('@aws-sdk/client-sqs') as typeof SQS,
  dynamodb: (): Taken<'@aws-sdk/client-dynamodb', typeof DynamoDB> =>
    require('@aws-sdk/client-dynamodb') as typeof DynamoDB,
  sns: (): Taken<'@aws-sdk/client-sns', typeof SNS> => require('@aws-sdk/client-sns') as typeof SNS,
  ssm: (): Taken<'@aws-sdk/client-ssm', typeof SSM> => require('@aws-sdk/client-ssm') as typeof SSM,
  lightsail: (): Taken<'@aws-sdk/client-lightsail', typeof Lightsail> =>
    require('@aws-sdk/client-lightsail') as typeof Lightsail,
  route53: (): Taken<'@aws-sdk/client-route-53', typeof Route53> =>
    require('@aws-sdk/client-route-53') as typeof Route53,
  lambda: (): Taken<'@aws-sdk/client-lambda', typeof Lambda> => require('@aws-sdk/client-lambda') as typeof Lambda,
  credentials: (): Taken<'@aws-sdk/credential-providers', typeof Credentials> =>
    require('@aws-sdk/credential-providers') as typeof Credentials,
};
