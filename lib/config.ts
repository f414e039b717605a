import { existsSync, readFileSync } from 'node:fs';
import { buildConfig, CONFIG_FILE_ENV, configSources, type Config, type ConfigSource } from './core/config';
import { parseJsonText } from './core/validate';
import { ValidationError } from './core/errors';

/**
 * The config file in use and what named it: the CLI's `--config` flag, FLEET_CONFIG_FILE, or (the
 * CLI only) the file `fleet init` wrote in the current directory.
 */
export interface ConfigFile {
  path: string;
  via: 'flag' | 'env' | 'cwd';
}

/** What `fleet init` writes when nothing names a file: the CLI reads it from there too. */
export const CWD_CONFIG_FILE = 'fleet-config.json';

/**
 * The file `--config` (the flag, `flagFile`) or else FLEET_CONFIG_FILE names; for the CLI (`cwd`),
 * else ./fleet-config.json if it exists; null when none does.
 */
export const configFileOf = (env: NodeJS.ProcessEnv, flagFile?: string, cwd = false): ConfigFile | null => {
  if (flagFile !== undefined && flagFile !== '') return { path: flagFile, via: 'flag' };
  const file = env[CONFIG_FILE_ENV];
  if (file !== undefined && file !== '') return { path: file, via: 'env' };
  return cwd && existsSync(CWD_CONFIG_FILE) ? { path: CWD_CONFIG_FILE, via: 'cwd' } : null;
};

const readConfigFile = (file: ConfigFile): unknown => {
  let text: string;
  try {
    text = readFileSync(file.path, 'utf8');
  } catch (error) {
    throw new ValidationError(
      `config file ${file.path}: cannot be read (${(error as Error).message})`,
      file.via === 'env' ? CONFIG_FILE_ENV : '--config',
      { cause: error },
    );
  }
  return parseJsonText(text, `config file ${file.path}`);
};

/** Reads the optional config file (configFileOf), then the environment. Fails fast. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env, flagFile?: string, cwd = false): Config =>
  loadConfigWithSources(env, flagFile, cwd).config;

/** The configuration, and where each of its values came from (`fleet doctor`). */
export const loadConfigWithSources = (
  env: NodeJS.ProcessEnv = process.env,
  flagFile?: string,
  cwd = false,
): { config: Config; sources: Record<keyof Config, ConfigSource>; file: ConfigFile | null } => {
  const file = configFileOf(env, flagFile, cwd);
  if (file === null) return { config: buildConfig(env), sources: configSources(env), file };
  const value = readConfigFile(file);
  return { config: buildConfig(env, value), sources: configSources(env, { path: file.path, value }), file };
};
