import type { Config, ConfigSource } from '../config';
import { check, type Check } from './doctor-checks';

/** The config file in use and what named it (lib/config.ts ConfigFile). */
export interface SourceFile {
  path: string;
  via: 'flag' | 'env' | 'cwd';
}

const NAMED_BY = { flag: '--config', env: 'FLEET_CONFIG_FILE', cwd: 'the current directory' } as const;

/** One source as people read it: `default`, `stage`, `file PATH (--config)`, `env FLEET_X`. */
export const describeSource = (source: ConfigSource, file: SourceFile | null): string => {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'stage':
      return 'default, from stage';
    case 'env':
      return `env ${source.name}`;
    case 'file':
      return `file ${source.path} (${NAMED_BY[file?.via ?? 'env']})`;
  }
};

/**
 * Where each value came from, grouped by source: the file a flag or FLEET_CONFIG_FILE named, each
 * FLEET_* variable, the stage's names, the defaults (counted, not listed: they are most keys); a
 * warning when nothing is set at all.
 */
export const sourcesCheck = (sources: Readonly<Record<keyof Config, ConfigSource>>, file: SourceFile | null): Check => {
  const groups = new Map<string, string[]>();
  let defaults = 0;
  for (const [key, source] of Object.entries(sources) as [keyof Config, ConfigSource][]) {
    if (source.kind === 'default') {
      defaults++;
      continue;
    }
    const label = describeSource(source, file);
    groups.set(label, [...(groups.get(label) ?? []), key]);
  }
  const parts = [...groups].map(([label, keys]) => `${label}: ${keys.join(', ')}`);
  parts.push(`default: the other ${defaults} keys`);
  // Nothing set anywhere: every name is a guess at a `dev` stack.
  const unset = groups.size === 0;
  const hint = unset
    ? 'nothing is configured: write a file with fleet init --stack <stage>, then pass --config FILE or set ' +
      'FLEET_CONFIG_FILE'
    : null;
  return check('config sources', unset ? 'warn' : 'ok', parts.join('; '), hint);
};
