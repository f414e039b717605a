/* eslint-disable @typescript-eslint/no-require-imports -- loading on first use is the point of this module */
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
/** Every SDK package the fleet's code loads: the Lambda layer carries exactly these (lib/deploy/sdk-layer.ts). */
export const SDK_PACKAGES = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-sns',
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-lightsail',
  '@aws-sdk/client-route-53',
  '@aws-sdk/client-lambda',
  '@aws-sdk/credential-providers',
] as const;

export const sdk = {
  s3: (): typeof S3 => require('@aws-sdk/client-s3') as typeof S3,
  sqs: (): typeof SQS => require('@aws-sdk/client-sqs') as typeof SQS,
  sns: (): typeof SNS => require('@aws-sdk/client-sns') as typeof SNS,
  ssm: (): typeof SSM => require('@aws-sdk/client-ssm') as typeof SSM,
  lightsail: (): typeof Lightsail => require('@aws-sdk/client-lightsail') as typeof Lightsail,
  route53: (): typeof Route53 => require('@aws-sdk/client-route-53') as typeof Route53,
  lambda: (): typeof Lambda => require('@aws-sdk/client-lambda') as typeof Lambda,
  credentials: (): typeof Credentials => require('@aws-sdk/credential-providers') as typeof Credentials,
};
