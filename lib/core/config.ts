import { parseWith } from './validate';
import { ValidationError } from './errors';
import { configSchema, type Config } from './config-schema';
import { controlTableOf, stateBucketOf } from './stack-names';

export * from './config-schema';

/**
 * How long a stage may make no progress before the worker stops it: the setting, or two samples
 * short of the stall window (at least one sample), so a hung task is retried before the whole
 * worker would be judged stalled and restarted.
 */
export const stageHangSeconds = (
  c: Pick<Config, 'stageHangSeconds' | 'stallSamples' | 'sampleIntervalSeconds'>,
): number => c.stageHangSeconds ?? Math.max(1, c.stallSamples - 2) * c.sampleIntervalSeconds;

/**
 * `seconds` rounded down to whole seconds of a clock running `timeScale` times faster than real
 * time: what an AWS parameter in whole seconds can carry (the hair of tolerance absorbs the
 * floating point of a divided duration).
 */
export const wholeSeconds = (seconds: number, timeScale: number): number =>
  Math.floor(seconds * timeScale + 1e-9) / timeScale;

/** Duration settings the drill divides by its time scale. */
export const DURATION_KEYS = [
  'sampleIntervalSeconds',
  'syncIntervalSeconds',
  'heartbeatKeepAliveSeconds',
  'completionWindowSeconds',
  'leaseRenewSeconds',
  'leaseExpirySeconds',
  'stageHangSeconds',
  'restartVerifySeconds',
  'failoverCooldownSeconds',
  'commandWaitSeconds',
  'taskRetentionSeconds',
  'watchdogScheduleSeconds',
  'intakeWaitAlertSeconds',
  'visibilityTimeoutSeconds',
  'receiveWaitSeconds',
  'workerStopTimeoutSeconds',
  'workerRestartSeconds',
  'retryCapSeconds',
] as const satisfies readonly (keyof Config)[];

const ENV_PREFIX = 'FLEET_';
const toEnvName = (key: string): string => ENV_PREFIX + key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
const CONFIG_KEYS = Object.keys(configSchema.shape) as (keyof Config)[];
/** Environment variable name for each config key. */
export const ENV_NAMES: Readonly<Record<keyof Config, string>> = Object.fromEntries(
  CONFIG_KEYS.map((k) => [k, toEnvName(k)]),
) as Record<keyof Config, string>;
/** `FLEET_CONFIG_FILE` names an optional JSON file; the environment overrides it key by key. */
export const CONFIG_FILE_ENV = 'FLEET_CONFIG_FILE';

/** Defaults tell each key's JSON type: numbers and arrays need coercion from a string. */
const DEFAULTS: Readonly<Record<string, unknown>> = configSchema.parse({});

/** Keys whose environment value is JSON (objects without a default to tell the type). */
const JSON_KEYS: ReadonlySet<string> = new Set(['stageCommands', 'pipeline']);

/** Turns one environment value into the JSON type its key expects. */
const coerceEnv = (key: keyof Config, raw: string): unknown => {
  const sample = DEFAULTS[key];
  if (typeof sample === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || Number.isNaN(n))
      throw new ValidationError(`config: ${ENV_NAMES[key]} (${key}): must be a number, got "${raw}"`, key);
    return n;
  }
  if (Array.isArray(sample) || JSON_KEYS.has(key)) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new ValidationError(`config: ${ENV_NAMES[key]} (${key}): must be JSON`, key);
    }
  }
  return raw;
};

/** Where a configuration's value came from, as `fleet doctor` reports it. */
export type ConfigSource =
  | { kind: 'default' }
  /** A default named after the stage (`queens-fleet-state-<stage>`). */
  | { kind: 'stage' }
  | { kind: 'file'; path: string }
  | { kind: 'env'; name: string };

/** The names the stack gives the bucket and table follow its stage, unless set. */
const STAGE_DEFAULTS: Readonly<Partial<Record<keyof Config, (stage: string) => string>>> = {
  bucket: stateBucketOf,
  table: controlTableOf,
};

/** The file's and the environment's values, each checked as raw JSON; not yet validated. */
const layers = (
  env: Readonly<Record<string, string | undefined>>,
  file: unknown,
): { fromFile: Record<string, unknown>; fromEnv: Record<string, unknown> } => {
  if (file !== undefined && (typeof file !== 'object' || file === null || Array.isArray(file)))
    throw new ValidationError('config file: must be a JSON object', '(root)');
  // Spread as parsed (a record schema would drop a `__proto__` key unseen): the strict schema below refuses it like any
  // unknown key.
  const fromFile = (file ?? {}) as Record<string, unknown>;
  const known = new Set<string>([...Object.values(ENV_NAMES), CONFIG_FILE_ENV]);
  for (const name of Object.keys(env)) {
    if (name.startsWith(ENV_PREFIX) && !known.has(name) && env[name] !== undefined) {
      throw new ValidationError(`config: unknown environment variable ${name}`, name);
    }
  }
  const fromEnv: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    const raw = env[ENV_NAMES[key]];
    // An empty variable means "not set": templates pass empty optional parameters that way.
    if (raw !== undefined && raw !== '') fromEnv[key] = coerceEnv(key, raw);
  }
  return { fromFile, fromEnv };
};

/**
 * Builds the configuration from an optional parsed JSON file and the environment. Pure: the
 * caller reads the file. Unknown `FLEET_*` variables are rejected like unknown file keys.
 */
export const buildConfig = (env: Readonly<Record<string, string | undefined>>, file?: unknown): Config => {
  const { fromFile, fromEnv } = layers(env, file);
  const merged: Record<string, unknown> = { ...fromFile, ...fromEnv };
  if (typeof merged.stage === 'string') {
    for (const [key, nameOf] of Object.entries(STAGE_DEFAULTS)) merged[key] ??= nameOf(merged.stage);
  }
  return parseWith(configSchema, merged, 'config');
};

/** Where each key's value came from: the environment over the file over the defaults (`file` names the file read). */
export const configSources = (
  env: Readonly<Record<string, string | undefined>>,
  file?: { path: string; value: unknown },
): Record<keyof Config, ConfigSource> => {
  const { fromFile, fromEnv } = layers(env, file?.value);
  const staged = fromEnv.stage !== undefined || fromFile.stage !== undefined;
  const sourceOf = (key: keyof Config): ConfigSource => {
    if (fromEnv[key] !== undefined) return { kind: 'env', name: ENV_NAMES[key] };
    if (fromFile[key] !== undefined && file !== undefined) return { kind: 'file', path: file.path };
    return staged && STAGE_DEFAULTS[key] !== undefined ? { kind: 'stage' } : { kind: 'default' };
  };
  return Object.fromEntries(CONFIG_KEYS.map((key) => [key, sourceOf(key)])) as Record<keyof Config, ConfigSource>;
};

/** Returns a copy with every duration divided by `timeScale`, and says so (drills run time faster). */
export const scaleConfig = (config: Config, timeScale: number): Config => {
  const scaled: Config = { ...config };
  for (const key of DURATION_KEYS) {
    const value = config[key];
    if (value !== undefined) scaled[key] = value / timeScale;
  }
  // A stage's own limits are durations too.
  if (config.pipeline !== undefined) {
    scaled.pipeline = config.pipeline.map((s) => ({
      ...s,
      ...(s.timeoutSeconds === undefined ? {} : { timeoutSeconds: s.timeoutSeconds / timeScale }),
      ...(s.hangSeconds === undefined ? {} : { hangSeconds: s.hangSeconds / timeScale }),
    }));
  }
  scaled.timeScale = config.timeScale * timeScale;
  return scaled;
};
