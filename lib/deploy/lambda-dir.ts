import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The nearest `node_modules` in `dir` or above it, or null. */
export const nodeModulesAbove = (dir: string): string | null => {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules'))) return join(at, 'node_modules');
    if (dirname(at) === at) return null;
  }
};

/**
 * A fresh directory laid out as Lambda's `/var/task` and `/opt` are: no `node_modules` in it or
 * above it, so a package is found through NODE_PATH (the unpacked layer) or not at all. The OS
 * temp dir when it qualifies; CI keeps TMPDIR inside the checkout, under the project's own
 * node_modules, where a package missing from the layer would be found there and pass unseen.
 */
export const lambdaLikeDir = (prefix: string): string => {
  for (const base of [tmpdir(), '/tmp']) {
    if (existsSync(base) && nodeModulesAbove(base) === null) return mkdtempSync(join(base, prefix));
  }
  throw new Error(`no temp directory without node_modules above it (tried ${tmpdir()} and /tmp)`);
};
