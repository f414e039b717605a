import { z } from 'zod';
import { isInheritedName } from './schemas';
import { METRIC_LEVELS } from './metrics/catalogue';
import { pipelineSchema, stageCommandsSchema } from './pipeline';
import { RUNBOOK_URL_PLACEHOLDER, runbookUrlSchema } from './runbook';
import { controlTableOf, DEFAULT_STAGE, STAGE_PATTERN, stateBucketOf } from './stack-names';

/** One node of the fleet as the watchdog knows it. */
export const nodeSpecSchema = z.strictObject({
  /** Logical name, also the S3 heartbeat prefix: `node-1`. */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lower-case letters, digits and dashes')
    .refine((name) => !isInheritedName(name), 'must not be a name every JavaScript object has (constructor)'),
  /**
   * SSM managed-instance id (`mi-…`) or EC2 id the Run Command targets. Unset: the watchdog finds the
   * managed instance registered with this node's own role (`fleet enroll`), so a node can be deployed
   * before it is registered.
   */
  instanceId: z
    .string()
    .regex(/^(mi|i)-[0-9a-f]{8,17}$/, 'must be an SSM managed-instance id such as mi-0123456789abcdef0')
    .optional(),
  /** Lightsail instance name, for the independent liveness confirmation. */
  lightsailName: z.string().min(1).optional(),
  /** Lower is preferred when promoting a standby. */
  priority: z.number().int().min(0).default(100),
  /** Address the origin record points at while this node is primary (A: IPv4, CNAME: host name). */
  address: z.string().min(1).max(253).optional(),
  /** Availability zone (`eu-west-2a`): at equal priority a standby outside the primary's zone is preferred. */
  zone: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/, 'must be an availability zone such as eu-west-2a')
    .optional(),
});
export type NodeSpec = z.output<typeof nodeSpecSchema>;

const seconds = z.number().positive();

/**
 * The whole configuration, flat so that every key maps to one environment variable
 * (`sampleIntervalSeconds` ⇔ `FLEET_SAMPLE_INTERVAL_SECONDS`). Defaults are the seed's.
 */
export const configSchema = z
  .strictObject({
    /** The AWS region of every service the fleet uses. */
    region: z.string().min(1).default('us-west-2'),
    /**
     * The stack's stage (`sls deploy --stage`): the default names of the bucket and table, and of each node's role,
     * by which the watchdog finds the node's managed instance.
     */
    stage: z.string().regex(STAGE_PATTERN, 'must be lower-case letters, digits and dashes').default(DEFAULT_STAGE),
    /** The state bucket: heartbeats, task records, events (`StateBucketName`); default `queens-fleet-state-<stage>`. */
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')
      .default(stateBucketOf(DEFAULT_STAGE)),
    /** The control table: lease, watchdog state (`ControlTableName`); default `queens-fleet-control-<stage>`. */
    table: z
      .string()
      .regex(/^[a-zA-Z0-9_.-]{3,255}$/, 'must be a valid DynamoDB table name')
      .default(controlTableOf(DEFAULT_STAGE)),
    /** The key prefix of everything the fleet keeps in the bucket. */
    prefix: z
      .string()
      .regex(/^([a-zA-Z0-9._-]+\/)*$/, 'must be empty or end with /')
      .default('peer-sync/'),
    /** The task queue the primary's worker consumes (the stack's `TaskQueueUrl` output). */
    queueUrl: z.url().optional(),
    /**
     * The queue producers send to; the watchdog admits from it to the task queue (backpressure). Unset: producers send
     * to the task queue.
     */
    intakeQueueUrl: z.url().optional(),
    /**
     * The task queue's dead-letter queue: the worker moves a task there once it failed `maxTaskFailures` times. Unset:
     * SQS's redrive alone decides.
     */
    deadLetterQueueUrl: z.url().optional(),
    /**
     * Where the Slack notifier's undelivered alerts land: the watchdog alerts each rise of its depth (NOTIFIER_FAILED).
     * Unset: not watched.
     */
    notifierFailureQueueUrl: z.url().optional(),
    /** The SNS topic alerts go to (the stack's `AlertTopicArn` output); unset: no alert is sent. */
    topicArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/, 'must be an SNS topic ARN')
      .optional(),
    /**
     * Where operators read docs/runbook.md: every alert links its entry (`<runbookUrl>#stalled`). The default is a
     * placeholder that never resolves: set it (docs/deploy.md).
     */
    runbookUrl: runbookUrlSchema.default(RUNBOOK_URL_PLACEHOLDER),
    /** Every node of the fleet (table below); the watchdog judges only these. */
    nodes: z.array(nodeSpecSchema).default([]),

    /** Each agent samples its node this often; every verdict counts in samples. */
    sampleIntervalSeconds: seconds.default(15),
    /** Each agent syncs the task manifest through S3 this often. */
    syncIntervalSeconds: seconds.default(30),
    /** Tasks completed within this window count as progress for the stall rule. */
    completionWindowSeconds: seconds.default(300),
    /** A primary is stalled after this many failing samples in a row (8 × 15 s: a 2-minute window). */
    stallSamples: z.number().int().min(2).max(100).default(8),
    /** Healthy samples in a row that close a stall incident. */
    recoverySamples: z.number().int().min(1).max(100).default(2),
    /** How many recent samples each heartbeat carries. */
    heartbeatSamples: z.number().int().min(2).max(200).default(16),
    /**
     * A node rewrites its heartbeat only with news, and at least this often. Liveness needs none of it (the
     * lease, the beat item): what it alone carries (CPU, memory) reaches the views at most this old.
     */
    heartbeatKeepAliveSeconds: seconds.default(1800),
    /**
     * The primary renews its lease this often, and each standby reads it every three quarters of this
     * (agent/lease-keeper.ts nextDelayMs).
     */
    leaseRenewSeconds: seconds.default(10),
    /** A standby takes an expired lease after this long without a change; the primary fences one renewal earlier. */
    leaseExpirySeconds: seconds.default(30),
    /**
     * A stage with no work (no progress line, under 200 ms and 1% of a core of CPU) for this long is
     * stopped and its task retried; by default two samples short of the stall window (90 s).
     */
    stageHangSeconds: seconds.optional(),

    /** Restarts the watchdog may send one node in an hour before it escalates. */
    restartBudgetPerHour: z.number().int().min(0).default(3),
    /** No automatic failover within this long of the last one. */
    failoverCooldownSeconds: z.number().min(0).default(300),
    /** How long one watchdog run waits for a stop command's result before handing over anyway. */
    commandWaitSeconds: seconds.default(10),
    /** Route 53 origin record the watchdog moves on failover, with `recordName`: both set, or neither. */
    hostedZoneId: z
      .string()
      .regex(/^[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id')
      .optional(),
    /** The Route 53 record traffic follows (with `hostedZoneId`); unset: no record is moved. */
    recordName: z.string().min(1).max(253).optional(),
    /** The record's type: `A` points at a node's IPv4 address, `CNAME` at its host name. */
    recordType: z.enum(['A', 'CNAME']).default('A'),
    /** The record's TTL in seconds. */
    recordTtl: z.number().int().min(0).max(86_400).default(60),
    /** How long the watchdog waits for a restart command's result before it gives up on it. */
    restartVerifySeconds: seconds.default(60),
    /** The watchdog's dead-man schedule (EventBridge `rate(1 minute)` in serverless.yml; drills run their own). */
    watchdogScheduleSeconds: seconds.default(60),
    /**
     * The watchdog function (name or ARN) the agent invokes asynchronously when a sample of the
     * primary fails or the role changes, so a verdict never waits for S3's notifications.
     */
    watchdogFunction: z
      .string()
      .regex(/^[A-Za-z0-9:_./-]{1,170}$/, 'must be a Lambda function name or ARN')
      .optional(),
    /**
     * The custom CloudWatch metrics the watchdog publishes as Embedded Metric Format log lines
     * (lib/core/metrics/catalogue.ts): `off`, `essential` ($2.10 a month for 2 nodes) or `detailed`.
     */
    metrics: z.enum(METRIC_LEVELS).default('essential'),

    /** Tasks the primary's worker runs at once. */
    concurrency: z.number().int().min(1).max(64).default(2),
    /**
     * Admission tops the task queue up to this many messages (visible and in flight), never above; with no ready
     * standby, reaching it holds input.
     */
    admissionHighMark: z.number().int().min(1).max(100_000).default(50),
    /** Held input resumes once the task queue is down to this many. */
    admissionLowMark: z.number().int().min(0).max(100_000).default(10),
    /**
     * Input that has waited in the intake queue at every read for this long is alerted once (INPUT_WAITING,
     * lib/core/fleet/intake-wait.ts).
     */
    intakeWaitAlertSeconds: seconds.default(3600),
    /** A task's stages (lib/core/pipeline.ts, docs/pipeline.md); the four synthetic stages by default. */
    pipeline: pipelineSchema.optional(),
    /** Shorthand of earlier releases: a command for some of the seed's stages (`pipeline` replaces it). */
    stageCommands: stageCommandsSchema.optional(),
    /** Where stages' artifacts go (under `<prefix>artifacts/`): the state bucket by default. */
    artifactsBucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')
      .optional(),
    /**
     * Real failures of a task (its stage failed or hung) before the worker moves it to the
     * dead-letter queue; hand-backs that are no failure (fencing, drains) never count.
     */
    maxTaskFailures: z.number().int().min(1).max(100).default(3),
    /**
     * The queue's redrive maxReceiveCount: a backstop for what no worker can count (a task that
     * kills its worker), above the receives an hour of outage can cost (`outageHourReceives`):
     * each real failure starts a new message, and hand-backs never count.
     */
    maxReceiveCount: z.number().int().min(1).max(1000).default(150),
    /** Completed tasks older than this leave the live manifest for dated archives. */
    taskRetentionSeconds: seconds.default(7 * 86_400),
    /**
     * How long a received message stays invisible; the worker extends what it holds every third of
     * it while its lease lasts, so a message held by a node that stopped comes back within it.
     */
    visibilityTimeoutSeconds: seconds.default(30),
    /** The longest SQS long poll; it always ends before the lease does. */
    receiveWaitSeconds: z.number().min(0).max(20).default(20),
    /** How long a stopping worker may drain its stages to checkpoints before it is killed. */
    workerStopTimeoutSeconds: seconds.default(30),
    /** The pause before systemd restarts a worker that exited (`RestartSec`). */
    workerRestartSeconds: seconds.default(1),
    /** Control objects larger than this are refused as damaged, never parsed. */
    maxObjectBytes: z
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** The longest pause between two retries of one S3 request (full jitter below it); drills scale it. */
    retryCapSeconds: seconds.default(2),
    /**
     * How many times faster than real time the durations run: 1 on a real fleet; a drill sets
     * it with the durations it divides (scaleConfig). AWS's whole-second parameters (SQS
     * WaitTimeSeconds) are whole seconds of this time.
     */
    timeScale: z.number().positive().max(1000).default(1),

    /** Agent only: the node this agent runs on, its state directory and health port. */
    nodeName: z.string().optional(),
    /** The node's own state: role file, task journal, stage folders (install.sh's `ReadWritePaths`). */
    dataDir: z.string().default('/var/queen-fleet'),
    /** The agent's `/healthz` port: 200 only on the live primary, for the Route 53 health check. */
    healthPort: z.number().int().min(0).max(65535).default(8087),
    /** Where /healthz listens: loopback by default; `0.0.0.0` (one file for all nodes) for Route 53's checks. */
    healthHost: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    if (!(c.sampleIntervalSeconds < c.syncIntervalSeconds))
      issue('syncIntervalSeconds', 'must be greater than sampleIntervalSeconds');
    // A hair of tolerance: a drill divides both by its time scale, and 3 × (10/30) is not 30/30 in floating point.
    if (!(c.leaseExpirySeconds >= 3 * c.leaseRenewSeconds - 1e-9))
      issue(
        'leaseExpirySeconds',
        'must be at least 3 × leaseRenewSeconds, so one failed renewal does not fence the primary',
      );
    if (c.stageHangSeconds !== undefined && !(c.stageHangSeconds < c.stallSamples * c.sampleIntervalSeconds)) {
      issue(
        'stageHangSeconds',
        'must be shorter than the stall window (stallSamples × sampleIntervalSeconds): a hung task is retried ' +
          'before the whole worker is judged stalled',
      );
    }
    if (c.pipeline !== undefined && c.stageCommands !== undefined)
      issue(
        'stageCommands',
        'is a shorthand for pipeline: set one of the two (move each command into its pipeline stage)',
      );
    c.pipeline?.forEach((s, i) => {
      if (s.hangSeconds !== undefined && !(s.hangSeconds < c.stallSamples * c.sampleIntervalSeconds)) {
        ctx.addIssue({
          code: 'custom',
          path: ['pipeline', i, 'hangSeconds'],
          message: 'must be shorter than the stall window (stallSamples × sampleIntervalSeconds)',
        });
      }
    });
    if (!(c.admissionLowMark < c.admissionHighMark))
      issue('admissionLowMark', 'must be below admissionHighMark, or held input would flap');
    if (!(c.completionWindowSeconds >= c.sampleIntervalSeconds))
      issue('completionWindowSeconds', 'must be at least sampleIntervalSeconds');
    if (!(c.heartbeatKeepAliveSeconds >= c.sampleIntervalSeconds))
      issue('heartbeatKeepAliveSeconds', 'must be at least sampleIntervalSeconds');
    if (!(c.heartbeatSamples >= c.stallSamples))
      issue('heartbeatSamples', 'must be at least stallSamples so a late watchdog sees a whole window');
    const names = new Set<string>();
    c.nodes.forEach((n, i) => {
      if (names.has(n.name))
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'name'], message: `duplicate node name ${n.name}` });
      names.add(n.name);
    });
    if ((c.hostedZoneId === undefined) !== (c.recordName === undefined))
      issue(c.hostedZoneId === undefined ? 'hostedZoneId' : 'recordName', 'hostedZoneId and recordName go together');
    if (c.hostedZoneId !== undefined) {
      c.nodes.forEach((n, i) => {
        if (n.address === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['nodes', i, 'address'],
            message: 'is required when a Route 53 record is configured',
          });
      });
    }
    if (c.nodeName !== undefined && c.nodes.length > 0 && !names.has(c.nodeName))
      issue('nodeName', `is not one of the configured nodes (${[...names].join(', ')})`);
  });

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
