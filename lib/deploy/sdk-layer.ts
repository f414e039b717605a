import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { build as esbuildBuild, Plugin } from 'esbuild';
import { SDK_EXPORTS, SDK_PACKAGES, type SdkPackage } from '../aws/sdk';

/**
 * The AWS SDK as a Lambda layer, so each function's zip holds only the fleet's own code (at most
 * 250 KiB) while the SDK stays the version package-lock.json pins, not whatever the
 * runtime ships. The functions are bundled with `@aws-sdk/*` external (serverless.yml); Lambda
 * finds the packages in `/opt/nodejs/node_modules`, ahead of the runtime's own SDK on NODE_PATH
 * (Lambda developer guide, "Working with layers for Node.js Lambda functions").
 *
 * The layer is a few bundles, one per group of LAYER_GROUPS, each holding of its packages only
 * the names SDK_EXPORTS lists: built from the packages' ES modules, so esbuild leaves out every
 * operation the fleet never sends (its command, its endpoint of code, what only it imports).
 * A group is evaluated whole when first required: every watchdog run needs S3, SQS and DynamoDB, so they
 * are one bundle, and the rest, needed only to act on an incident, another; each group carries
 * its own copy of the code they share (the Smithy core). Beside the bundles, one two-line
 * package per SDK name that hands out its part of its group's bundle.
 */
export const LAYER_GROUPS: Readonly<Record<string, readonly SdkPackage[]>> = {
  // Loaded by every watchdog and replay run, and by the agents (the lease is in DynamoDB).
  'every-run': ['@aws-sdk/client-s3', '@aws-sdk/client-sqs', '@aws-sdk/client-dynamodb'],
  // Loaded only to act: alert, restart, fail over, move the records, trigger a run.
  actions: [
    '@aws-sdk/client-sns',
    '@aws-sdk/client-ssm',
    '@aws-sdk/client-lightsail',
    '@aws-sdk/client-route-53',
    '@aws-sdk/client-lambda',
  ],
  // The nodes' credentials file; no function loads it.
  credentials: ['@aws-sdk/credential-providers'],
  // The worker's multipart artifact uploads; no function loads it either.
  storage: ['@aws-sdk/lib-storage'],
};

/** The bundle package of a group. */
export const bundleOf = (group: string): string => `@queen-fleet/aws-sdk-${group}`;

const ROOT = resolve(__dirname, '..', '..');

/** The version package-lock.json installed, as the package says. */
const installedVersion = (pkg: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * A group bundle's entry, an ES module: each package's listed names imported by name (so the
 * rest of the package can be left out) and exported as `packages[pkg]`.
 */
export const groupEntry = (pkgs: readonly SdkPackage[]): string => {
  const imports = pkgs.map((pkg, i) => {
    const names = SDK_EXPORTS[pkg].map((name) => `${name} as p${i}_${name}`).join(', ');
    return `import { ${names} } from ${JSON.stringify(pkg)};`;
  });
  const entries = pkgs.map(
    (pkg, i) => `  ${JSON.stringify(pkg)}: { ${SDK_EXPORTS[pkg].map((name) => `${name}: p${i}_${name}`).join(', ')} },`,
  );
  return `${imports.join('\n')}\nexport const packages = {\n${entries.join('\n')}\n};\n`;
};

/** The package that stands for `pkg` in the layer: its part of its group's bundle. */
export const stubOf = (pkg: SdkPackage, group: string): string =>
  `module.exports = require(${JSON.stringify(bundleOf(group))}).packages[${JSON.stringify(pkg)}];\n`;

/** The group that holds `pkg`; every package of SDK_PACKAGES is in exactly one. */
export const groupOf = (pkg: SdkPackage): string => {
  const groups = Object.entries(LAYER_GROUPS).filter(([, pkgs]) => pkgs.includes(pkg));
  if (groups.length !== 1) throw new Error(`${pkg} is in ${groups.length} layer groups, not one`);
  return groups[0]?.[0] ?? '';
};

/**
 * Writes the layer's tree into `dir` (`nodejs/node_modules/…`, the layout Lambda expects for
 * Node.js), replacing what was there, and returns each group bundle's size in bytes. `build` is
 * esbuild's, passed in by the caller: loaded through tsx's namespaced require (the packaging
 * plugin), esbuild would look for its binary at a path that does not exist.
 */
export const buildSdkLayer = async (
  dir: string,
  build: typeof esbuildBuild,
  plugins: Plugin[] = [],
): Promise<Record<string, number>> => {
  rmSync(dir, { recursive: true, force: true });
  const modules = join(dir, 'nodejs', 'node_modules');
  const sizes: Record<string, number> = {};
  for (const [group, pkgs] of Object.entries(LAYER_GROUPS)) {
    const home = join(modules, bundleOf(group));
    const result = await build({
      stdin: { contents: groupEntry(pkgs), resolveDir: ROOT, sourcefile: `aws-sdk-${group}.mjs`, loader: 'js' },
      outfile: join(home, 'index.js'),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      // The packages' ES modules first: only what the listed names import is kept.
      mainFields: ['module', 'main'],
      minify: true,
      keepNames: true,
      legalComments: 'none',
      logLevel: 'error',
      metafile: true,
      plugins,
    });
    sizes[group] = Object.values(result.metafile.outputs)[0]?.bytes ?? 0;
    const sdk = Object.fromEntries(pkgs.map((p) => [p, installedVersion(p)]));
    const manifest = { name: bundleOf(group), private: true, main: 'index.js', sdk };
    writeFileSync(join(home, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  }
  for (const pkg of SDK_PACKAGES) {
    const home = join(modules, pkg);
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, 'package.json'),
      `${JSON.stringify({ name: pkg, version: installedVersion(pkg), private: true, main: 'index.js' }, null, 2)}\n`,
    );
    writeFileSync(join(home, 'index.js'), stubOf(pkg, groupOf(pkg)));
  }
  return sizes;
};
