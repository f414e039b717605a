import 'aws-sdk-client-mock-jest';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-west-2';
process.env.LOG_LEVEL ??= 'silent';
// The watchdog's Embedded Metric Format lines go to standard output; tests that read them ask for them.
process.env.FLEET_METRICS ??= 'off';
