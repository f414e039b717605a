import { readFileSync } from 'node:fs';
import { buildConfig, CONFIG_FILE_ENV, type Config } from './core/config';
import { parseJsonText } from './core/validate';
import { ValidationError } from './core/errors';

/** Reads the optional config file named by FLEET_CONFIG_FILE, then the environment. Fails fast. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => {
  const file = env[CONFIG_FILE_ENV];
  if (file === undefined || file === '') return buildConfig(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ValidationError(`config file ${file}: cannot be read (${(error as Error).message})`, CONFIG_FILE_ENV, {
      cause: error,
    });
  }
  return buildConfig(env, parseJsonText(text, `config file ${file}`));
};
