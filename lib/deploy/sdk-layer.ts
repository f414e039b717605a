import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { build as esbuildBuild, Plugin } from 'esbuild';
import { SDK_PACKAGES } from '../aws/sdk';

/**
 * The AWS SDK as a Lambda layer, so each function's zip holds only the fleet's own code (issue
 * 13: ≤ 250 KiB) while the SDK stays the version package-lock.json pins, not whatever the
 * runtime ships. The functions are bundled with `@aws-sdk/*` external (serverless.yml); Lambda
 * finds the packages in `/opt/nodejs/node_modules`, ahead of the runtime's own SDK on NODE_PATH
 * (Lambda developer guide, "Working with layers for Node.js Lambda functions").
 *
 * The layer is one bundle, `@queen-fleet/aws-sdk`, with every package of SDK_PACKAGES inside and
 * the code they share (the Smithy core) once; each package is a function that evaluates it on
 * first call. Beside it, one two-line package per name that hands the function its package from
 * the bundle. A watchdog run that needs S3 and SQS evaluates those two and no other.
 */
export const LAYER_BUNDLE = '@queen-fleet/aws-sdk';

const ROOT = resolve(__dirname, '..', '..');

/** The version package-lock.json installed, as the package says. */
const installedVersion = (pkg: string): string => (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/** The bundle's entry: each package a function, so esbuild's wrapper for it runs on first call. */
export const layerEntry = (): string =>
  `module.exports = {\n${SDK_PACKAGES.map((pkg) => `  ${JSON.stringify(pkg)}: () => require(${JSON.stringify(pkg)}),`).join('\n')}\n};\n`;

/** The package that stands for `pkg` in the layer: the bundle's copy of it. */
export const stubOf = (pkg: string): string => `module.exports = require(${JSON.stringify(LAYER_BUNDLE)})[${JSON.stringify(pkg)}]();\n`;

/**
 * Writes the layer's tree into `dir` (`nodejs/node_modules/…`, the layout Lambda expects for
 * Node.js), replacing what was there, and returns the bundle's size in bytes. `build` is
 * esbuild's, passed in by the caller: loaded through tsx's namespaced require (the packaging
 * plugin), esbuild would look for its binary at a path that does not exist.
 */
export const buildSdkLayer = async (dir: string, build: typeof esbuildBuild, plugins: Plugin[] = []): Promise<number> => {
  rmSync(dir, { recursive: true, force: true });
  const modules = join(dir, 'nodejs', 'node_modules');
  const bundle = join(modules, LAYER_BUNDLE, 'index.js');
  const result = await build({
    stdin: { contents: layerEntry(), resolveDir: ROOT, sourcefile: 'aws-sdk-layer.js', loader: 'js' },
    outfile: bundle,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'error',
    metafile: true,
    plugins,
  });
  writeFileSync(join(modules, LAYER_BUNDLE, 'package.json'), `${JSON.stringify({ name: LAYER_BUNDLE, private: true, main: 'index.js', sdk: Object.fromEntries(SDK_PACKAGES.map((p) => [p, installedVersion(p)])) }, null, 2)}\n`);
  for (const pkg of SDK_PACKAGES) {
    const home = join(modules, pkg);
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'package.json'), `${JSON.stringify({ name: pkg, version: installedVersion(pkg), private: true, main: 'index.js' }, null, 2)}\n`);
    writeFileSync(join(home, 'index.js'), stubOf(pkg));
  }
  return Object.values(result.metafile.outputs)[0]?.bytes ?? 0;
};
