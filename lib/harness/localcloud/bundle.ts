import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build, version as esbuildVersion, type BuildOptions, type Plugin } from 'esbuild';

/** Paths of the single-file bundles the local fleet runs. */
export interface Bundles {
  agent: string;
  worker: string;
  nodeHost: string;
}

const ROOT = resolve(__dirname, '..', '..', '..');
/** The esbuild plugins the function bundles use too (serverless.yml `custom.esbuild.plugins`). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file Serverless loads as well
const PLUGINS = require(join(ROOT, 'resources', 'esbuild-plugins.cjs')) as Plugin[];

/** Entry points of the two node daemons, keyed by the bundle name each one ships as. */
export const DAEMON_ENTRIES: Readonly<Record<'agent' | 'worker', string>> = {
  agent: join(ROOT, 'agent/main.ts'),
  worker: join(ROOT, 'agent/worker/main.ts'),
};

/**
 * Node's options for both daemons, as their units' ExecStart gives them (agent/install/*.service;
 * tests/agent/units.test.ts holds the two together) and as the drills run them. Semi-spaces of
 * 1 MiB instead of V8's 16: the young generation of a daemon that allocates little then never
 * grows to tens of MiB, and the agents' peaks fall by about 10 MiB (`npx tsx bench/footprint.ts
 * --node-args ""` runs a drill without them) at no CPU a peer-sync round shows
 * (bench/peer-sync-cost.ts, the same within its noise).
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** What may differ between the local fleet's bundles and the ones shipped to a node. */
export interface BundleOptions {
  /**
   * Minify whitespace and syntax, keeping names (errors are named after their class, stack
   * frames name their functions). Renaming identifiers too saves no memory on Node 22, the
   * nodes' Node: 4 MiB more with the S3 and SQS clients loaded (`npx tsx bench/bundle-rss.ts`).
   */
  minify?: boolean;
  /** Write `<name>.js.map` beside each bundle (loaded only under --enable-source-maps, which the units leave off). */
  sourcemap?: boolean;
}

/** One file with every dependency inside, for Node 22, CommonJS. */
export const buildOptions = (options: BundleOptions): BuildOptions => {
  const minify = options.minify ?? false;
  return {
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    logLevel: 'error',
    legalComments: 'none',
    minifyWhitespace: minify,
    minifySyntax: minify,
    keepNames: minify,
    sourcemap: options.sourcemap === true ? 'linked' : false,
    plugins: PLUGINS,
  };
};

/**
 * Bundles each entry (name → source file) into `<outDir>/<name>.js`: one file with every
 * dependency inside, for Node 22, CommonJS. Returns the path of each bundle by name.
 */
export const bundleEntries = async <K extends string>(
  entries: Readonly<Record<K, string>>,
  outDir: string,
  options: BundleOptions = {},
): Promise<Record<K, string>> => {
  await build({ ...buildOptions(options), entryPoints: entries, outdir: outDir });
  const names = Object.keys(entries) as K[];
  return Object.fromEntries(names.map((name) => [name, join(outDir, `${name}.js`)])) as Record<K, string>;
};

/** Where built node bundles are kept between drills, by the content of everything they were built from. */
const CACHE_DIR = join(tmpdir(), 'queen-fleet-bundles');
const CACHE_INDEX = join(CACHE_DIR, 'index.json');
const NODE_ENTRIES = { ...DAEMON_ENTRIES, 'node-host': join(ROOT, 'lib/harness/localcloud/node-host.ts') };

/**
 * The key of a build: every file esbuild read for it (its metafile's inputs, plugin-made ones
 * aside), the plugins, this file (the options) and esbuild's version. A missing input is a miss.
 */
export const bundleKey = (inputs: readonly string[]): string | null => {
  const hash = createHash('sha256').update(`${esbuildVersion}\0${JSON.stringify(NODE_ENTRIES)}\0`);
  for (const file of [...inputs, join(ROOT, 'resources', 'esbuild-plugins.cjs'), __filename]) {
    if (!existsSync(file)) return null;
    hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
};

const bundlesIn = (dir: string): Bundles => ({
  agent: join(dir, 'agent.js'),
  worker: join(dir, 'worker.js'),
  nodeHost: join(dir, 'node-host.js'),
});

/** The cached bundles, if every file they were built from is as it was. */
const cached = async (): Promise<Bundles | null> => {
  try {
    const index = JSON.parse(await readFile(CACHE_INDEX, 'utf8')) as { key: string; inputs: string[] };
    const dir = join(CACHE_DIR, index.key);
    return bundleKey(index.inputs) === index.key && existsSync(join(dir, 'node-host.js')) ? bundlesIn(dir) : null;
  } catch {
    return null;
  }
};

/**
 * Bundles the agent, the worker and the node host into single files, as they ship to a node,
 * so a restarted process starts in tens of milliseconds instead of recompiling TypeScript. A
 * build is kept (in the temp directory, keyed by the content of every file it read) and reused
 * by the next drill while nothing it was built from changed: each drill saves about a second.
 */
export const buildBundles = async (outDir: string): Promise<Bundles> => placed(await cachedOrBuilt(), outDir);

/**
 * The bundles linked into `outDir` (copied across file systems): each run's processes run from
 * its own directory, which names them on their command line (tests find leftovers by it).
 */
const placed = async (from: Bundles, outDir: string): Promise<Bundles> => {
  await mkdir(outDir, { recursive: true });
  const to = bundlesIn(outDir);
  for (const name of ['agent', 'worker', 'nodeHost'] as const)
    await link(from[name], to[name]).catch(() => copyFile(from[name], to[name]));
  return to;
};

const cachedOrBuilt = async (): Promise<Bundles> => {
  const hit = await cached();
  if (hit !== null) return hit;
  const building = join(CACHE_DIR, `building-${randomUUID()}`);
  await mkdir(building, { recursive: true });
  const result = await build({ ...buildOptions({}), entryPoints: NODE_ENTRIES, outdir: building, metafile: true });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((p) => !p.includes(':'))
    .map((p) => resolve(p))
    .sort();
  const key = bundleKey(inputs);
  if (key === null) return bundlesIn(building);
  const dir = join(CACHE_DIR, key);
  // Concurrent drills may build the same key: the first rename wins, the others use it.
  await rename(building, dir).catch(() => rm(building, { recursive: true, force: true }));
  const index = join(CACHE_DIR, `index-${randomUUID()}.json`);
  await writeFile(index, JSON.stringify({ key, inputs }));
  await rename(index, CACHE_INDEX);
  await prune(key);
  return bundlesIn(dir);
};

/** Drops builds of other sources an hour after they were made (a drill still running from one keeps its links). */
const prune = async (keep: string): Promise<void> => {
  const old = Date.now() - 3_600_000;
  for (const entry of await readdir(CACHE_DIR, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === keep) continue;
    const at = join(CACHE_DIR, entry.name);
    // Another drill may have renamed its build away since the listing.
    const made = await stat(at).then(
      (s) => s.mtimeMs,
      () => null,
    );
    if (made !== null && made < old) await rm(at, { recursive: true, force: true });
  }
};
