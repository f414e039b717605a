import { z } from 'zod';
import { parseWith } from '../../core/validate';

/**
 * The local cloud's faithful behaviours: each one named switch with its own timing, modelled on
 * what AWS documents (or, where it gives no number, the less kind value). All times are in
 * scenario milliseconds; a drill divides them by its time scale like every other duration.
 * `docs/aws-behaviour.md` is generated from `BEHAVIOUR_DOCS` below (npm run docs:behaviour) and
 * a test keeps it current.
 */
const ms = z.number().min(0).max(86_400_000);
const share = z.number().min(0).max(1);
const on = z.boolean();

export const behaviourSchema = z.strictObject({
  s3ConditionalConflict: z.strictObject({ on, windowMs: ms }),
  s3LostResponse: z.strictObject({ on, rate: share, resetShare: share }),
  s3SlowDownBursts: z.strictObject({ on, meanGapMs: ms.min(1), burstMs: ms, rate: share }),
  s3Notifications: z.strictObject({
    on,
    typicalMinMs: ms,
    typicalMaxMs: ms,
    lateShare: share,
    lateMinMs: ms,
    lateMaxMs: ms,
    duplicateRate: share,
  }),
  lambdaAsync: z.strictObject({
    on,
    queueMinMs: ms,
    queueMaxMs: ms,
    retryDelaysMs: z.array(ms).max(2),
    duplicateRate: share,
  }),
  eventBridgeSchedule: z.strictObject({ on, targetDelayMaxMs: ms }),
  ssmRunCommand: z.strictObject({
    on,
    deliveryMinMs: ms,
    deliveryMaxMs: ms,
    invisibleMaxMs: ms,
    invisibleTailShare: share,
    invisibleTailMaxMs: ms,
    delayedAfterMs: ms,
  }),
  ssmPing: z.strictObject({ on, intervalMs: ms.min(1), lostAfterMs: ms }),
  lightsailStates: z.strictObject({ on, stoppingMs: ms, pendingMs: ms }),
  route53Propagation: z.strictObject({ on, insyncAfterMs: ms }),
  sqsRedelivery: z.strictObject({ on, rate: share }),
  dynamoThrottleBursts: z.strictObject({ on, meanGapMs: ms.min(1), burstMs: ms, rate: share }),
  dynamoLostResponse: z.strictObject({ on, rate: share, resetShare: share }),
  dynamoStaleReads: z.strictObject({ on, lagMs: ms }),
  signatureTime: z.strictObject({ on, s3SkewMs: ms, skewMs: ms }),
});
export type Behaviour = z.output<typeof behaviourSchema>;
export type BehaviourName = keyof Behaviour;

/** Every behaviour on, at the defaults `docs/aws-behaviour.md` justifies. */
export const FAITHFUL: Behaviour = {
  s3ConditionalConflict: { on: true, windowMs: 300 },
  s3LostResponse: { on: true, rate: 0.01, resetShare: 0.5 },
  s3SlowDownBursts: { on: true, meanGapMs: 300_000, burstMs: 3_000, rate: 0.5 },
  s3Notifications: {
    on: true,
    typicalMinMs: 1_000,
    typicalMaxMs: 5_000,
    lateShare: 0.1,
    lateMinMs: 60_000,
    lateMaxMs: 120_000,
    duplicateRate: 0.02,
  },
  lambdaAsync: { on: true, queueMinMs: 100, queueMaxMs: 1_000, retryDelaysMs: [60_000, 120_000], duplicateRate: 0.01 },
  eventBridgeSchedule: { on: true, targetDelayMaxMs: 10_000 },
  ssmRunCommand: {
    on: true,
    deliveryMinMs: 500,
    deliveryMaxMs: 3_000,
    invisibleMaxMs: 2_000,
    invisibleTailShare: 0.05,
    invisibleTailMaxMs: 5_000,
    delayedAfterMs: 30_000,
  },
  ssmPing: { on: true, intervalMs: 300_000, lostAfterMs: 720_000 },
  lightsailStates: { on: true, stoppingMs: 120_000, pendingMs: 30_000 },
  route53Propagation: { on: true, insyncAfterMs: 60_000 },
  sqsRedelivery: { on: true, rate: 0.005 },
  dynamoThrottleBursts: { on: true, meanGapMs: 300_000, burstMs: 3_000, rate: 0.5 },
  dynamoLostResponse: { on: true, rate: 0.01, resetShare: 0.5 },
  dynamoStaleReads: { on: true, lagMs: 1_000 },
  signatureTime: { on: true, s3SkewMs: 900_000, skewMs: 300_000 },
};

/** Every behaviour off: the instant, always-answering cloud (unit tests that need one outcome). */
export const KIND: Behaviour = Object.fromEntries(
  Object.entries(FAITHFUL).map(([name, b]) => [name, { ...b, on: false }]),
) as Behaviour;

/** A scenario's overrides: per behaviour `false` (off), `true` (defaults) or some of its fields. */
export const behaviourOverridesSchema = z.partialRecord(
  z.enum(Object.keys(FAITHFUL) as [BehaviourName, ...BehaviourName[]]),
  z.union([z.boolean(), z.record(z.string(), z.unknown())]),
);
export type BehaviourOverrides = z.output<typeof behaviourOverridesSchema>;

/** The faithful behaviours with a scenario's overrides applied, validated field by field. */
export const resolveBehaviour = (overrides: unknown = {}): Behaviour => {
  const merged: Record<string, unknown> = { ...FAITHFUL };
  for (const [name, value] of Object.entries(parseWith(behaviourOverridesSchema, overrides, 'scenario: behaviour'))) {
    const base = FAITHFUL[name as BehaviourName];
    merged[name] = typeof value === 'boolean' ? { ...base, on: value } : { ...base, ...value };
  }
  return parseWith(behaviourSchema, merged, 'scenario: behaviour');
};

/** Divides every duration by the time scale (a drill at ×20 runs AWS's minute in 3 s). */
export const scaleBehaviour = (b: Behaviour, timeScale: number): Behaviour =>
  JSON.parse(JSON.stringify(b), (key: string, value: unknown) => {
    if (typeof value === 'number' && /Ms$/.test(key)) return value / timeScale;
    if (Array.isArray(value) && key.endsWith('Ms')) return (value as number[]).map((v) => v / timeScale);
    return value;
  }) as Behaviour;

/** What each behaviour models and where AWS says so: the source of docs/aws-behaviour.md. */
export interface BehaviourDoc {
  service: string;
  what: string;
  source: { title: string; url: string; quote: string }[];
  /** Why the defaults are what they are (AWS's number, or the less kind choice where it gives none). */
  defaults: string;
}

export const BEHAVIOUR_DOCS: Readonly<Record<BehaviourName, BehaviourDoc>> = {
  s3ConditionalConflict: {
    service: 'S3',
    what:
      'A conditional PUT (If-Match or If-None-Match) whose precondition fails within `windowMs` of another write to ' +
      'the same key answers 409 ConditionalRequestConflict instead of 412: ' +
      'the caller cannot tell whether the key exists and must retry.',
    source: [
      {
        title: 'PutObject API reference',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html',
        quote:
          'If a conflicting operation occurs during the upload S3 returns a 409 ConditionalRequestConflict ' +
          'response. On a 409 failure you should retry the upload.',
      },
      {
        title: 'S3 user guide: conditional writes',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html',
        quote:
          'the first write operation to finish succeeds. Amazon S3 then fails subsequent writes with a 412 ' +
          'Precondition Failed response',
      },
    ],
    defaults:
      'AWS gives no window. 300 ms (a small upload racing another), and always 409 inside it (the less kind answer: ' +
      'it says nothing about the object).',
  },
  s3LostResponse: {
    service: 'S3',
    what:
      'A share of PUTs is applied and then loses its response: the connection is reset, or a 500 InternalError ' +
      'comes back after the object was stored. The client retries, and a conditional retry then meets its own write ' +
      '(412).',
    source: [
      {
        title: 'S3 5xx errors (AWS re:Post knowledge center)',
        url: 'https://repost.aws/knowledge-center/http-5xx-errors-s3',
        quote:
          'a very small percentage of 5xx errors is expected during normal use of the service. ' +
          'All requests that return 5xx errors from Amazon S3 can be retried.',
      },
      {
        title: 'CompleteMultipartUpload API reference',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html',
        quote: 'A request could fail after the initial 200 OK response has been sent.',
      },
    ],
    defaults:
      'AWS gives no rate ("a very small percentage"). 1 % of PUTs (the top of the 0.1–1 % range), half of them a ' +
      'reset connection, half a 500.',
  },
  s3SlowDownBursts: {
    service: 'S3',
    what:
      'Bursts start at random (exponential gaps of mean `meanGapMs`) and last `burstMs`; ' +
      'during one, a share `rate` of S3 requests from the nodes and the watchdog answers 503 SlowDown.',
    source: [
      {
        title: 'S3 503 Slow Down (AWS re:Post knowledge center)',
        url: 'https://repost.aws/knowledge-center/s3-503-within-request-rate-prefix',
        quote:
          'If there is a fast spike in the request rate for objects in a prefix, Amazon S3 might return 503 Slow ' +
          'Down errors while it scales in the background',
      },
    ],
    defaults:
      'AWS gives no frequency. A 3 s burst every 5 minutes on average, half of the requests in it refused: ' +
      'far more often than a fleet this small would meet.',
  },
  s3Notifications: {
    service: 'S3',
    what:
      'Event notifications of heartbeat writes reach the watchdog late: ' +
      'most after `typicalMinMs`–`typicalMaxMs`, a share `lateShare` after `lateMinMs`–`lateMaxMs`; ' +
      'a share is delivered twice; independent delays put them out of order.',
    source: [
      {
        title: 'S3 event notifications',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventNotifications.html',
        quote:
          'Amazon S3 event notifications are designed to be delivered at least once. ' +
          'Typically, event notifications are delivered in seconds but can sometimes take a minute or longer.',
      },
      {
        title: 'Event message structure',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html',
        quote: "Event notifications aren't guaranteed to arrive in the same order that the events occurred.",
      },
    ],
    defaults: '"In seconds" is 1–5 s; "a minute or longer" is 60–120 s for 10 % of them; 2 % arrive twice.',
  },
  lambdaAsync: {
    service: 'Lambda',
    what:
      "Asynchronous invocations (S3 notifications, the agents' direct invokes) wait in a queue for " +
      '`queueMinMs`–`queueMaxMs`; an invocation that throws is retried after each of `retryDelaysMs`; a share is ' +
      "delivered twice even without an error. An invocation that can go no further (a drill's `watchdog-crash`) is " +
      "ended at the function's timeout (serverless.yml) and retried like one that threw.",
    source: [
      {
        title: 'Lambda: error handling for asynchronous invocation',
        url: 'https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html',
        quote:
          'If the function returns an error, by default Lambda attempts to run it two more times, with a one-minute ' +
          'wait between the first two attempts, and two minutes between the second and third attempts. Function ' +
          "errors include errors returned by the function's code and errors returned by the function's runtime, " +
          'such as timeouts.',
      },
      {
        title: 'Lambda: error handling for asynchronous invocation',
        url: 'https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html',
        quote:
          "Even if your function doesn't return an error, it's possible for it to receive the same event from " +
          'Lambda multiple times because the queue itself is eventually consistent.',
      },
    ],
    defaults: 'Retries as documented (1 min, then 2 min). AWS gives no queue latency: 0.1–1 s. Duplicates: 1 %.',
  },
  eventBridgeSchedule: {
    service: 'EventBridge',
    what:
      'A rate schedule fires once in each period, at a random point within it (never on the period boundary), and ' +
      'the target starts up to `targetDelayMaxMs` later: two runs can be almost two periods apart.',
    source: [
      {
        title: 'EventBridge: scheduled rules',
        url: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-rule-schedule.html',
        quote:
          'Your scheduled rule runs within that minute, but not on the precise 0th second. ' +
          '… there can be a delay of several seconds between the time the scheduled rule is triggered and the time ' +
          'the target service runs the target resource.',
      },
    ],
    defaults:
      'Uniform within the period, plus 0–10 s ("several seconds"). ' +
      'The documentation names the minute a run is due in; for a rate of more than a minute the run is spread over ' +
      'the whole period, the less kind reading.',
  },
  ssmRunCommand: {
    service: 'SSM Run Command',
    what:
      'Invocations go Pending → InProgress → Success/Failed. Delivery to a reachable node takes ' +
      '`deliveryMinMs`–`deliveryMaxMs`. A node that cannot be reached (crashed, frozen, cut off, rebooting, ' +
      'stopped) leaves the command Pending, then Delayed after `delayedAfterMs`; ' +
      'it still runs if the node comes back before the delivery timeout (TimeoutSeconds), and otherwise ends ' +
      'TimedOut (DeliveryTimedOut) once the delivery plus execution timeout has passed. ' +
      'A command in progress on a node that dies stays InProgress until its execution timeout. ' +
      'CancelCommand: Pending/Delayed → Cancelled, InProgress → Cancelling until the script ends. ' +
      'GetCommandInvocation answers InvocationDoesNotExist for up to `invisibleMaxMs` after SendCommand (a share up ' +
      'to `invisibleTailMaxMs`).',
    source: [
      {
        title: 'Run Command: command statuses',
        url: 'https://docs.aws.amazon.com/systems-manager/latest/userguide/monitor-commands.html',
        quote:
          "Delayed: The system attempted to send the command to the instance but wasn't successful. " +
          'The system retries again.',
      },
      {
        title: 'SendCommand API reference',
        url: 'https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_SendCommand.html',
        quote: "TimeoutSeconds: If this time is reached and the command hasn't already started running, it won't run.",
      },
      {
        title: 'botocore CommandExecuted waiter',
        url: 'https://github.com/boto/botocore/blob/develop/botocore/data/ssm/2014-11-06/waiters-2.json',
        quote: '{"state":"retry","matcher":"error","expected":"InvocationDoesNotExist"}',
      },
      {
        title: 'boto/boto3#2701',
        url: 'https://github.com/boto/boto3/issues/2701',
        quote:
          'Waiter unable to access SSM Run Command ID right after send_command is invoked … sleep timer of 0.5-1 ' +
          'second',
      },
    ],
    defaults:
      'AWS gives no delivery latency: 0.5–3 s. InvocationDoesNotExist for 0–2 s, 5 % of the time up to 5 s. ' +
      'Delayed after 30 s without delivery. Timeouts as the caller sets them (min 30 s delivery).',
  },
  ssmPing: {
    service: 'SSM',
    what:
      "A managed node's SSM Agent pings every `intervalMs` while the node runs and can reach AWS; " +
      'PingStatus turns ConnectionLost only `lostAfterMs` after the last ping, and comes back Online only at the ' +
      'next ping after the node is reachable again.',
    source: [
      {
        title: 'Troubleshooting managed node availability',
        url: 'https://docs.aws.amazon.com/systems-manager/latest/userguide/troubleshooting-managed-nodes.html',
        quote: "confirmed by the service sending a signal every five minutes to check the instance's health",
      },
      {
        title: 'amazon-ssm-agent README',
        url: 'https://github.com/aws/amazon-ssm-agent',
        quote: 'HealthFrequencyMinutes (int) … Default: 5',
      },
      {
        title: 'aws/amazon-ssm-agent#210',
        url: 'https://github.com/aws/amazon-ssm-agent/issues/210',
        quote: 'several minutes before it detects it is offline',
      },
    ],
    defaults:
      'AWS gives no threshold for ConnectionLost: 12 minutes (two missed 5-minute pings and then some). ' +
      'A crashed node reads Online for 7–12 minutes.',
  },
  lightsailStates: {
    service: 'Lightsail',
    what:
      'GetInstanceState reports what Lightsail reports: a crashed, frozen or rebooting VM stays `running` (code ' +
      '16); a stop goes `stopping` (64) for `stoppingMs`, then `stopped` (80); ' +
      'a start goes `pending` (0) for `pendingMs`, then `running`.',
    source: [
      {
        title: 'EC2 instance state codes (Lightsail uses the same)',
        url: 'https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_InstanceState.html',
        quote: '0 : pending, 16 : running, 32 : shutting-down, 48 : terminated, 64 : stopping, 80 : stopped',
      },
      {
        title: 'EC2 status checks',
        url: 'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitoring-system-instance-status-check.html',
        quote:
          'The event status data augments the information that Amazon EC2 already provides about the state of each ' +
          'instance (such as pending, running, stopping)',
      },
      {
        title: 'EC2 StopInstances',
        url: 'https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html',
        quote: 'It can take a few minutes for the instance to stop.',
      },
    ],
    defaults:
      'AWS gives no stop time ("a few minutes"): 120 s in `stopping`; 30 s in `pending`. ' +
      'No `rebooting` state exists, so a reboot reads `running` throughout.',
  },
  route53Propagation: {
    service: 'Route 53',
    what:
      'ChangeResourceRecordSets applies at once (the API lists the new value), but GetChange reports PENDING for ' +
      '`insyncAfterMs` before INSYNC.',
    source: [
      {
        title: 'Route 53 FAQ',
        url: 'https://aws.amazon.com/route53/faqs/',
        quote:
          'Amazon Route 53 is designed to propagate updates you make to your DNS records to its world-wide network ' +
          'of authoritative DNS servers within 60 seconds under normal conditions.',
      },
      {
        title: 'GetChange API reference',
        url: 'https://docs.aws.amazon.com/Route53/latest/APIReference/API_GetChange.html',
        quote:
          'PENDING indicates that the changes in this request have not propagated to all Amazon Route 53 DNS ' +
          'servers managing the hosted zone.',
      },
    ],
    defaults: 'The documented bound, 60 s, every time (the less kind end of "within 60 seconds").',
  },
  sqsRedelivery: {
    service: 'SQS',
    what:
      'A share of DeleteMessage calls, and of the entries of DeleteMessageBatch calls, answers success without ' +
      'deleting: the message comes back once its visibility timeout runs out, and is received a second time.',
    source: [
      {
        title: 'SQS at-least-once delivery',
        url: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html',
        quote:
          "the copy of the message isn't deleted on the server that is unavailable, and you might get that message " +
          'copy again when you receive messages.',
      },
    ],
    defaults: 'AWS says "on rare occasions": 0.5 % of deletes.',
  },
  dynamoThrottleBursts: {
    service: 'DynamoDB',
    what:
      'Bursts start at random (exponential gaps of mean `meanGapMs`) and last `burstMs`; ' +
      "during one, a share `rate` of the fleet's DynamoDB requests answers 400 " +
      "ProvisionedThroughputExceededException, whatever the table's capacity mode.",
    source: [
      {
        title: 'ProvisionedThroughputExceededException (AWS SDK reference)',
        url: 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#API_UpdateItem_Errors',
        quote:
          'Your request rate is too high. The AWS SDKs for DynamoDB automatically retry requests that receive this ' +
          'exception.',
      },
      {
        title: 'DynamoDB on-demand capacity mode',
        url: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html',
        quote: 'throttling can occur if you exceed double your previous peak within 30 minutes',
      },
    ],
    defaults:
      "A fleet this small never nears a partition's limits, and AWS gives no rate for other throttling. " +
      'As for S3: a 3 s burst every 5 minutes on average, half of the requests in it refused.',
  },
  dynamoLostResponse: {
    service: 'DynamoDB',
    what:
      'A share of writes (UpdateItem, PutItem) is applied and then loses its response: ' +
      'the connection is reset, or a 500 InternalServerError comes back. ' +
      'A conditional write sent again then fails its condition against its own write.',
    source: [
      {
        title: 'Error handling with DynamoDB',
        url: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html',
        quote: 'InternalServerError … OK to retry? Yes',
      },
      {
        title: 'TransactWriteItems API reference',
        url: 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html',
        quote:
          'Providing a ClientRequestToken makes the call to TransactWriteItems idempotent, meaning that multiple ' +
          'identical calls have the same effect as one single call.',
      },
    ],
    defaults:
      'AWS gives no rate, and only transactions carry an idempotency token: ' +
      '1 % of writes, half of them a reset connection, half a 500 after the write was applied (the less kind ' +
      'reading of a 500).',
  },
  dynamoStaleReads: {
    service: 'DynamoDB',
    what:
      'An eventually consistent read (a GetItem without ConsistentRead) of an item written within the last `lagMs` ' +
      'returns the item as it was `lagMs` ago. A strongly consistent read always returns the latest write.',
    source: [
      {
        title: 'DynamoDB read consistency',
        url: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html',
        quote:
          'the responses may not reflect the results of a recently completed write operation. ' +
          'If you repeat your read request after a short time, the response should eventually return the more ' +
          'recent item.',
      },
    ],
    defaults: 'AWS gives no lag ("a short time"): 1 s, and every such read inside it is stale (the less kind end).',
  },
  signatureTime: {
    service: 'every service (SigV4)',
    what:
      "Each signed request's signing time (its `x-amz-date`, or else the day of its credential scope) is checked " +
      "against the cloud's own clock. S3 refuses one more than `s3SkewMs` off with 403 RequestTimeTooSkewed " +
      '(RequestTime and ServerTime in the body); SQS, DynamoDB, SSM, Lightsail and Lambda refuse one more than ' +
      '`skewMs` off with 400 InvalidSignatureException, "Signature expired: … is now earlier than …" or "Signature ' +
      'not yet current: … is still later than …"; SNS and Route 53 with 403 SignatureDoesNotMatch and the same ' +
      "words. Every such answer carries a `Date` header of the cloud's time: the AWS SDK sets its clock offset " +
      '(`systemClockOffset`) from it and signs the next attempt with the corrected time. A request a blackhole held ' +
      'is checked when it finally arrives.',
    source: [
      {
        title: 'S3: Authenticating Requests (AWS Signature Version 4)',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html',
        quote:
          'The signed portions (using AWS Signatures) of requests are valid within 15 minutes of the timestamp in ' +
          'the request.',
      },
      {
        title: 'S3: error responses',
        url: 'https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html',
        quote:
          "RequestTimeTooSkewed | The difference between the request time and the server's time is too large. | " +
          '403 Forbidden',
      },
      {
        title: 'IAM: AWS Signature Version 4 for API requests',
        url: 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html',
        quote: 'In most cases, a request must reach AWS within five minutes of the time stamp in the request',
      },
      {
        title: 'boto/botocore#149 (the words AWS answers with)',
        url: 'https://github.com/boto/botocore/issues/149',
        quote: 'Signature expired: 20131008T001036Z is now earlier than 20131008T001112Z (20131008T001612Z - 5 min.)',
      },
      {
        title: 'crazy-max/ddns-route53#40 (Route 53)',
        url: 'https://github.com/crazy-max/ddns-route53/issues/40',
        quote: 'SignatureDoesNotMatch: Signature expired: … (20191218T103249Z - 5 min.) … status code: 403',
      },
      {
        title: 'aws/aws-sdk-js#265 (SNS)',
        url: 'https://github.com/aws/aws-sdk-js/issues/265',
        quote: 'SignatureDoesNotMatch: Signature expired: … is now earlier than … (20140428T174328Z - 15 min.)',
      },
      {
        title: 'aws-sdk-js-v3: AwsSdkSigV4Signer (how the SDK corrects its clock)',
        url:
          'https://github.com/aws/aws-sdk-js-v3/blob/main/packages/core/src/submodules/httpAuthSchemes/aws_sdk/' +
          'AwsSdkSigV4Signer.ts',
        quote: 'const serverTime = errorException.ServerTime ?? getDateHeader(errorException.$response);',
      },
    ],
    defaults:
      'AWS\'s own windows: 15 minutes for S3, 5 minutes elsewhere ("in most cases"; SNS was seen allowing 15, ' +
      'the less kind 5 is kept). Both are scenario time like every duration. Signing times and the `Date` header ' +
      'have whole seconds, so a client that corrected its clock may still be 2 s off: 2 s more are allowed either way.',
  },
};
