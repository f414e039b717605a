import { join, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** Paths of the single-file bundles the local fleet runs. */
export interface Bundles {
  agent: string;
  worker: string;
  nodeHost: string;
}

const ROOT = resolve(__dirname, '..', '..', '..');
/** The esbuild plugins the function bundles use too (serverless.yml `custom.esbuild.plugins`). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file the Serverless Framework loads as well
const PLUGINS = require(join(ROOT, 'resources', 'esbuild-plugins.cjs')) as Plugin[];

/** Entry points of the two node daemons, keyed by the bundle name each one ships as. */
export const DAEMON_ENTRIES: Readonly<Record<'agent' | 'worker', string>> = {
  agent: join(ROOT, 'agent/main.ts'),
  worker: join(ROOT, 'agent/worker/main.ts'),
};

/** What may differ between the local fleet's bundles and the ones shipped to a node. */
export interface BundleOptions {
  /** Minify, keeping function and class names: `FleetError` names errors after their class. */
  minify?: boolean;
  /** Write `<name>.js.map` beside each bundle (run node with --enable-source-maps). */
  sourcemap?: boolean;
}

/**
 * Bundles each entry (name → source file) into `<outDir>/<name>.js`: one file with every
 * dependency inside, for Node 20, CommonJS. Returns the path of each bundle by name.
 */
export const bundleEntries = async <K extends string>(entries: Readonly<Record<K, string>>, outDir: string, options: BundleOptions = {}): Promise<Record<K, string>> => {
  const minify = options.minify ?? false;
  await build({
    entryPoints: entries,
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'error',
    legalComments: 'none',
    minify,
    keepNames: minify,
    sourcemap: options.sourcemap === true ? 'linked' : false,
    plugins: PLUGINS,
  });
  const names = Object.keys(entries) as K[];
  return Object.fromEntries(names.map((name) => [name, join(outDir, `${name}.js`)])) as Record<K, string>;
};

/**
 * Bundles the agent, the worker and the node host into single files, as they ship to a node,
 * so a restarted process starts in tens of milliseconds instead of recompiling TypeScript.
 */
export const buildBundles = async (outDir: string): Promise<Bundles> => {
  const out = await bundleEntries({ ...DAEMON_ENTRIES, 'node-host': join(ROOT, 'lib/harness/localcloud/node-host.ts') }, outDir);
  return { agent: out.agent, worker: out.worker, nodeHost: out['node-host'] };
};
