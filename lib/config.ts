import { readFileSync } from 'node:fs';
import { buildConfig, CONFIG_FILE_ENV, configSources, type Config, type ConfigSource } from './core/config';
import { parseJsonText } from './core/validate';
import { ValidationError } from './core/errors';

/** The config file in use and what named it: the CLI's `--config` flag, or FLEET_CONFIG_FILE. */
export interface ConfigFile {
  path: string;
  via: 'flag' | 'env';
}

/** The file `--config` (the flag, `flagFile`) or else FLEET_CONFIG_FILE names; null when neither does. */
export const configFileOf = (env: NodeJS.ProcessEnv, flagFile?: string): ConfigFile | null => {
  if (flagFile !== undefined && flagFile !== '') return { path: flagFile, via: 'flag' };
  const file = env[CONFIG_FILE_ENV];
  return file === undefined || file === '' ? null : { path: file, via: 'env' };
};

const readConfigFile = (file: ConfigFile): unknown => {
  let text: string;
  try {
    text = readFileSync(file.path, 'utf8');
  } catch (error) {
    throw new ValidationError(
      `config file ${file.path}: cannot be read (${(error as Error).message})`,
      file.via === 'flag' ? '--config' : CONFIG_FILE_ENV,
      { cause: error },
    );
  }
  return parseJsonText(text, `config file ${file.path}`);
};

/** Reads the optional config file (`--config`, else FLEET_CONFIG_FILE), then the environment. Fails fast. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env, flagFile?: string): Config =>
  loadConfigWithSources(env, flagFile).config;

/** The configuration, and where each of its values came from (`fleet doctor`). */
export const loadConfigWithSources = (
  env: NodeJS.ProcessEnv = process.env,
  flagFile?: string,
): { config: Config; sources: Record<keyof Config, ConfigSource>; file: ConfigFile | null } => {
  const file = configFileOf(env, flagFile);
  if (file === null) return { config: buildConfig(env), sources: configSources(env), file };
  const value = readConfigFile(file);
  return { config: buildConfig(env, value), sources: configSources(env, { path: file.path, value }), file };
};
