import { join } from 'node:path';
import { z } from 'zod';
import { SEED_STAGES } from '../pipeline';
import { ValidationError } from '../errors';
import { parseWith } from '../validate';
import { eventAtSchema, nodeTarget as target } from './trigger';
import { operatorActionSchema } from './operator';

/** Scenario seconds, or an event the fault waits for (lib/core/drill/trigger.ts). */
const at = z.union([z.number().min(0), eventAtSchema]);
const forSeconds = z.number().positive().optional();
const base = { at, target: target.default('primary'), for: forSeconds };

/**
 * Keys a `lost-response` fault may single out (each names the PUTs whose key matches), by the
 * caller's name for them.
 */
export const LOSABLE_KEYS = {
  leader: /(^|\/)leader\.json$/,
  'watchdog-state': /(^|\/)watchdog\/state\.json$/,
  heartbeat: /(^|\/)nodes\/[^/]+\/heartbeat\.json$/,
  events: /(^|\/)events\//,
  checkpoint: /(^|\/)tasks\/[^/]+\/checkpoint\.json$/,
  done: /(^|\/)tasks\/[^/]+\/done\.json$/,
  manifest: /(^|\/)manifest(\.json$|\/)/,
} as const;

/**
 * Control objects a `corrupt-object` fault writes garbage over (`heartbeat`: the target node's;
 * `manifest-bucket`: shard `bucket`).
 */
export const CORRUPTIBLE_KEYS = ['leader', 'watchdog-state', 'heartbeat', 'manifest-bucket'] as const;

/** Every fault kind, each with its own fields. */
export const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ ...base, kind: z.literal('stall-worker'), until: z.enum(['restart', 'never']).default('restart') }),
  z.strictObject({ ...base, kind: z.literal('crash-worker') }),
  z.strictObject({ ...base, kind: z.literal('kill-node') }),
  z.strictObject({ ...base, kind: z.literal('stop-node') }),
  z.strictObject({ ...base, kind: z.literal('freeze-node') }),
  z.strictObject({ ...base, kind: z.literal('reboot-node'), for: z.number().positive() }),
  z.strictObject({ ...base, kind: z.literal('kill-agent') }),
  z.strictObject({ ...base, kind: z.literal('partition-node') }),
  z.strictObject({ ...base, kind: z.literal('hang-stage') }),
  z.strictObject({ ...base, kind: z.literal('clock-skew'), offsetSeconds: z.number() }),
  z.strictObject({ ...base, kind: z.literal('duplicate-watchdog'), copies: z.number().int().min(2).max(10) }),
  z.strictObject({ ...base, kind: z.literal('watchdog-outage') }),
  z.strictObject({ ...base, kind: z.literal('slow-tasks'), factor: z.number().min(1).max(100) }),
  z.strictObject({ ...base, kind: z.literal('s3-throttle'), rate: z.number().min(0).max(1) }),
  z.strictObject({ ...base, kind: z.literal('s3-latency'), ms: z.number().int().min(0).max(60_000) }),
  /** Without a target every S3 request of every node and of the watchdog fails; with one, only that node's. */
  z.strictObject({ ...base, target: target.optional(), kind: z.literal('s3-outage') }),
  /** Every request of the node vanishes, neither answered nor reset, and is applied when the fault clears. */
  z.strictObject({ ...base, kind: z.literal('blackhole-node') }),
  /** The watchdog dies between claiming a restart and sending it: each run that gets there goes no further. */
  z.strictObject({ ...base, kind: z.literal('watchdog-crash') }),
  /** Every DynamoDB request of every node and of the watchdog fails: the lease can be neither read nor renewed. */
  z.strictObject({ ...base, kind: z.literal('dynamodb-outage') }),
  z.strictObject({ ...base, kind: z.literal('notification-lag'), seconds: z.number().min(0).max(3_600) }),
  z.strictObject({ ...base, kind: z.literal('poison-task') }),
  /** Not a fault: an operator's `fleet switchover --to <target>` (a standby by default), under load. */
  z.strictObject({ ...base, target: target.default('standby'), kind: z.literal('switchover') }),
  /**
   * Every PUT of one caller (a node, or `watchdog`) to a matching key is applied and its response
   * lost, while the fault lasts.
   */
  z.strictObject({
    ...base,
    target: z.union([target, z.literal('watchdog')]).default('primary'),
    kind: z.literal('lost-response'),
    key: z.enum(Object.keys(LOSABLE_KEYS) as [keyof typeof LOSABLE_KEYS, ...(keyof typeof LOSABLE_KEYS)[]]).optional(),
  }),
  z.strictObject({
    ...base,
    kind: z.literal('corrupt-object'),
    key: z.enum(CORRUPTIBLE_KEYS),
    bucket: z.number().int().min(0).max(255).default(0),
  }),
]);
export type Fault = z.output<typeof faultSchema>;
export type FaultKind = Fault['kind'];

/** Fault kinds the drill can inject, kept as a set so a future kind can be declared before it is built. */
export const SUPPORTED_FAULTS: ReadonlySet<FaultKind> = new Set([
  'stall-worker',
  'crash-worker',
  'kill-node',
  'stop-node',
  'freeze-node',
  'reboot-node',
  'kill-agent',
  'partition-node',
  'hang-stage',
  'clock-skew',
  'duplicate-watchdog',
  'watchdog-outage',
  'slow-tasks',
  's3-throttle',
  's3-latency',
  's3-outage',
  'dynamodb-outage',
  'notification-lag',
  'poison-task',
  'lost-response',
  'corrupt-object',
  'blackhole-node',
  'watchdog-crash',
  'switchover',
]);

/** Faults that cannot be undone, and why a `for` means nothing for them. */
export const ONE_WAY_FAULTS: Readonly<Partial<Record<FaultKind, string>>> = {
  'crash-worker': 'a crashed process cannot be un-crashed (its supervisor restarts it)',
  'kill-node': 'a crashed VM cannot be un-crashed (use reboot-node for a machine that comes back)',
  'hang-stage': 'the hung stages are stopped and retried by the worker, not resumed',
  'poison-task': 'a poison message stays poison',
  'corrupt-object': 'the garbage is written once; healing it is what the drill watches',
  switchover: 'a handover is not undone (a second switchover moves the role back)',
};

/** Faults that act on the whole fleet or its control plane: `target` names nothing for them. */
export const FLEET_WIDE_FAULTS: ReadonlySet<FaultKind> = new Set([
  'duplicate-watchdog',
  'watchdog-outage',
  'watchdog-crash',
  'slow-tasks',
  's3-outage',
  'dynamodb-outage',
  'notification-lag',
  'poison-task',
]);

/** Whether this fault strikes the whole fleet: an s3-outage does unless it names a node. */
export const isFleetWide = (fault: Fault): boolean =>
  FLEET_WIDE_FAULTS.has(fault.kind) && !(fault.kind === 's3-outage' && fault.target !== undefined);

const count = z.number().int().min(0);
const range = z.union([count, z.strictObject({ min: count.optional(), max: count.optional() })]);
const bound = z.number().min(0);

export const expectSchema = z.strictObject({
  /** Worker restarts of the stall ladder (not those that make a standby rejoin). */
  restarts: range.optional(),
  /** Standbys that rejoined: a worker restarted by the watchdog that then passed its self-test. */
  rejoins: range.optional(),
  failovers: range.optional(),
  maxDetectSeconds: bound.optional(),
  maxFailoverSeconds: bound.optional(),
  maxTrafficSeconds: bound.optional(),
  /** Stall verdict after the heartbeat that carried the window's last failing sample. */
  maxVerdictSeconds: bound.optional(),
  /** From a fault to the first receive of the new primary's epoch. */
  maxServingSeconds: bound.optional(),
  /** From a fault to when every task the faulted node held was taken up again. */
  maxResumeSeconds: bound.optional(),
  /** From a fault to when a node other than the primary was a ready standby again. */
  maxRedundantSeconds: bound.optional(),
  lostTasks: count.optional(),
  duplicateCompletions: count.optional(),
  falseFailovers: count.optional(),
  /** Times input was held (INPUT_HELD): backpressure. */
  inputHolds: range.optional(),
  /** The most messages the task queue held at once (visible and in flight), sampled every sample interval. */
  maxBacklog: count.optional(),
  /** Messages in the dead-letter queue at the end. */
  deadLettered: count.optional(),
  /**
   * For faults no worker has to stop for: the longest time no worker did any work (a receive, a
   * checkpoint, an extension).
   */
  maxConsumeGapSeconds: bound.optional(),
});
export type Expectations = z.output<typeof expectSchema>;
export type Range = z.output<typeof range>;

/**
 * Test media for a media pipeline: `episodes` clips of `seconds` each, made with ffmpeg's lavfi
 * sources and served from loopback at playback speed. In a payload's strings, `{source}` is
 * the URL of message n's episode (n mod episodes), `{episode}` its number, `{delivery}` the
 * drill's delivery folder. The first read of each `stall` episode to pass its middle stops
 * there, its connection open: a real hang.
 */
const mediaSeconds = z.number().int().min(2).max(600);
export const mediaSchema = z.strictObject({
  episodes: z.number().int().min(1).max(20).default(3),
  /** Every episode's length, or each one's in turn. */
  seconds: z.union([mediaSeconds, z.array(mediaSeconds).min(1).max(20)]).default(20),
  stall: z.array(z.number().int().min(1).max(20)).max(20).default([]),
});
export type MediaSpec = z.output<typeof mediaSchema>;

export const scenarioSchema = z
  .strictObject({
    name: z.string().min(1).max(120),
    nodes: z.number().int().min(1).max(9),
    seconds: z.number().positive().max(86_400),
    workload: z.strictObject({
      tasks: z.number().int().min(0).max(10_000),
      meanTaskSeconds: z.number().positive().max(86_400),
      spread: z.number().min(0).max(3).default(0.3),
      arrivalSeconds: z.number().positive().optional(),
      concurrency: z.number().int().min(1).max(64).optional(),
      /** Extra tasks arriving evenly over `seconds` from `at`, on top of the steady ones (a producer's burst). */
      burst: z
        .strictObject({
          at: z.number().min(0),
          tasks: z.number().int().min(1).max(10_000),
          seconds: z.number().positive(),
        })
        .optional(),
      /**
       * `module`: the worker's built-in stages; `command`: each stage a process
       * (lib/harness/drill/stage.sh), which hang-stage needs.
       */
      stages: z.enum(['module', 'command']).default('module'),
      /**
       * Sent as every message's `payload` (each message has its own `taskId`): what a pipeline of
       * `config.pipeline` reads.
       */
      payload: z.record(z.string(), z.unknown()).optional(),
    }),
    media: mediaSchema.optional(),
    faults: z.array(faultSchema).max(100).default([]),
    operator: z.array(operatorActionSchema).max(20).default([]),
    expect: expectSchema.default({}),
    /**
     * Optional configuration overrides (unscaled, as in production), checked by the config's own
     * strict schema: kept as parsed, since a record schema would drop a `__proto__` key unseen.
     */
    config: z
      .custom<Record<string, unknown>>(
        (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
        'must be an object of configuration keys',
      )
      .optional(),
    /** Overrides of the local cloud's faithful behaviours (docs/aws-behaviour.md), checked by the drill. */
    behaviour: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((s, ctx) => {
    /** A node the scenario names must be one it has. */
    const node = (name: string | undefined, path: (string | number)[]): void => {
      const m = /^node-(\d+)$/.exec(name ?? '');
      const beyond = `names a node the scenario does not have (${s.nodes} nodes)`;
      if (m !== null && Number(m[1]) > s.nodes) ctx.addIssue({ code: 'custom', path, message: beyond });
      const alone = 'a standby needs at least 2 nodes';
      if (name === 'standby' && s.nodes < 2) ctx.addIssue({ code: 'custom', path, message: alone });
    };
    s.faults.forEach((f, i) => {
      const late = `is after the end of the run (${s.seconds} s)`;
      if (typeof f.at === 'number' && f.at > s.seconds) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'at'], message: late });
      }
      if (typeof f.at !== 'number') node(f.at.node, ['faults', i, 'at', 'node']);
      const at = (key: string, message: string): void =>
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'at', key], message });
      if (typeof f.at !== 'number' && f.at.after === 'source' && s.media === undefined) {
        at('after', "source needs the scenario's media");
      }
      if (typeof f.at !== 'number' && (f.at.episode ?? 0) > (s.media?.episodes ?? 0)) {
        at('episode', 'names an episode the media does not have');
      }
      const stages = Array.isArray(s.config?.['pipeline']) ? s.config['pipeline'].length : SEED_STAGES.length;
      if (typeof f.at !== 'number' && f.at.stages !== undefined && f.at.stages > stages) {
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'at', 'stages'],
          message: `is more than the ${stages} stages a task has`,
        });
      }
      node(f.target, ['faults', i, 'target']);
      const oneWay = ONE_WAY_FAULTS[f.kind];
      if (oneWay !== undefined && f.for !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'for'],
          message: `cannot be undone, so it takes no "for": ${oneWay}`,
        });
      const processes = s.workload.stages === 'command' || Array.isArray(s.config?.['pipeline']);
      if (f.kind === 'hang-stage' && !processes)
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'kind'],
          message:
            'hang-stage needs stages that run as processes: set workload.stages to "command", or config.pipeline',
        });
    });
    s.operator.forEach((a, i) => {
      if (a.at > s.seconds) ctx.addIssue({ code: 'custom', path: ['operator', i, 'at'], message: 'is after the end' });
      if ('target' in a) node(a.target, ['operator', i, 'target']);
    });
    const lengths = s.media?.seconds;
    const media = (path: (string | number)[], message: string): void =>
      ctx.addIssue({ code: 'custom', path: ['media', ...path], message });
    if (Array.isArray(lengths) && lengths.length !== s.media?.episodes) {
      media(['seconds'], 'must give one length per episode');
    }
    s.media?.stall.forEach((n, i) => {
      if (n > (s.media?.episodes ?? 0)) media(['stall', i], 'names an episode the media does not have');
    });
    const burst = s.workload.burst;
    if (burst !== undefined && burst.at + burst.seconds > s.seconds)
      ctx.addIssue({ code: 'custom', path: ['workload', 'burst'], message: 'must end within seconds' });
    if (s.workload.arrivalSeconds !== undefined && s.workload.arrivalSeconds > s.seconds) {
      ctx.addIssue({ code: 'custom', path: ['workload', 'arrivalSeconds'], message: 'must not exceed seconds' });
    }
  });
export type Scenario = z.output<typeof scenarioSchema>;

/**
 * The scenario with its pipeline's commands made absolute: a command word or argument that starts
 * with `./` or `../` is relative to the scenario file's folder `dir`; a bare name is left to PATH.
 */
export const withPipelineFrom = (scenario: Scenario, dir: string): Scenario => {
  const pipeline: unknown = scenario.config?.['pipeline'];
  if (!Array.isArray(pipeline)) return scenario;
  return { ...scenario, config: { ...scenario.config, pipeline: pipelineFrom(pipeline, dir) } };
};

/** A pipeline's stages (unchecked), each command's `./` and `../` words made relative to `dir`. */
export const pipelineFrom = (pipeline: unknown, dir: string): unknown => {
  if (!Array.isArray(pipeline)) return pipeline;
  const resolve = (word: unknown): unknown =>
    typeof word === 'string' && /^\.\.?\//.test(word) ? join(dir, word) : word;
  return pipeline.map((stage: unknown) => {
    if (typeof stage !== 'object' || stage === null || !('command' in stage) || !Array.isArray(stage.command))
      return stage;
    return { ...stage, command: stage.command.map(resolve) };
  });
};

/** Validates a parsed scenario file; also refuses fault kinds the drill cannot inject yet. */
export const parseScenario = (input: unknown): Scenario => {
  const scenario = parseWith(scenarioSchema, input, 'scenario');
  scenario.faults.forEach((f, i) => {
    if (!SUPPORTED_FAULTS.has(f.kind)) {
      throw new ValidationError(
        `scenario: faults.${i}.kind: fault kind "${f.kind}" is not supported yet ` +
          `(supported: ${[...SUPPORTED_FAULTS].join(', ')})`,
        `faults.${i}.kind`,
      );
    }
  });
  return scenario;
};
