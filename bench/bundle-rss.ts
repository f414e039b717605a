/**
 * What a node process's memory is made of, each figure from fresh Node processes, RSS and heap
 * read after a full GC (median of --runs):
 * 1. The build options: the fleet's own S3 and SQS clients (`lib/aws/sdk.ts`, as the agent and
 *    the worker load them) bundled as the drills bundle the nodes, as `bin/build-agent.ts` ships
 *    them, and with identifiers minified too (as it shipped before).
 * 2. The layers of a node process as shipped: a bare Node; the agent's and the worker's code
 *    loaded with the AWS SDK stubbed out (the floor without it); with the S3, SQS and DynamoDB
 *    clients built; then with the units' Node options (DAEMON_NODE_FLAGS), and with
 *    `--enable-source-maps` (the map beside the bundle, as a node has it).
 * Run: npx tsx bench/bundle-rss.ts [--runs N] [--node PATH] [--write]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Table from 'cli-table3';
import { Command } from 'commander';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { buildOptions, DAEMON_NODE_FLAGS } from '../lib/harness/localcloud/bundle';
import { recorded } from './record';

const ROOT = resolve(__dirname, '..');
const WORK = join(ROOT, '.tmp', 'bundle-rss');
const SDK = JSON.stringify(join(ROOT, 'lib', 'aws', 'sdk'));

/** Prints RSS and heap after a full GC, once the process has settled. */
const REPORT = `setTimeout(() => {
  global.gc?.();
  const m = process.memoryUsage();
  process.stdout.write(JSON.stringify({ rss: m.rss, heap: m.heapUsed }));
}, 200);
`;
const CLIENTS =
  `import { sdk } from ${SDK};
const region = 'us-west-2';
(globalThis as Record<string, unknown>).clients = [` +
  'new (sdk.s3().S3Client)({ region }), new (sdk.sqs().SQSClient)({ region }), ' +
  `new (sdk.dynamodb().DynamoDBClient)({ region })];
`;
/** The daemons' modules, loaded (each entry starts its daemon on import: these do not). */
const NODE_CODE = `import * as agent from ${JSON.stringify(join(ROOT, 'agent', 'agent'))};
import * as worker from ${JSON.stringify(join(ROOT, 'agent', 'worker', 'worker'))};
(globalThis as Record<string, unknown>).code = [agent, worker];
`;

/** Every `@aws-sdk/*` and `@smithy/*` import becomes an empty stand-in: the node's code without the SDK. */
const stubSdk: Plugin = {
  name: 'stub-sdk',
  setup(b) {
    b.onResolve({ filter: /^@(aws-sdk|smithy)\// }, (args) => ({ path: args.path, namespace: 'stub-sdk' }));
    b.onLoad({ filter: /.*/, namespace: 'stub-sdk' }, () => ({
      contents: 'module.exports = new Proxy({}, { get: () => class {} });',
      loader: 'js',
    }));
  },
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

interface Measured {
  kib: number;
  rss: number;
  heap: number;
}

/** Bundles `source` with `options` and loads it in `runs` fresh processes with `flags`. */
const measure = async (
  node: string,
  runs: number,
  name: string,
  source: string,
  options: BuildOptions,
  flags: readonly string[] = [],
): Promise<Measured> => {
  const entry = join(WORK, `${name}.ts`);
  const out = join(WORK, `${name}.js`);
  writeFileSync(entry, source);
  await build({ ...options, entryPoints: [entry], outfile: out });
  const got: { rss: number; heap: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const res = spawnSync(node, ['--expose-gc', ...flags, out], {
      encoding: 'utf8',
      cwd: WORK,
      env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    if (res.status !== 0) throw new Error(`${name}: ${res.stderr}`);
    got.push(JSON.parse(res.stdout) as { rss: number; heap: number });
  }
  return { kib: statSync(out).size / 1024, rss: median(got.map((g) => g.rss)), heap: median(got.map((g) => g.heap)) };
};

const table = (head: string[]): Table.Table => new Table({ head, style: { head: [], border: [] } });

const main = async (): Promise<void> => {
  const opts = new Command()
    .option('--runs <n>', 'fresh processes per variant', '5')
    .option('--node <path>', 'the Node binary to load them with', process.execPath)
    .parse()
    .opts<{ runs: string; node: string }>();
  const runs = Number(opts.runs);
  mkdirSync(WORK, { recursive: true });
  const version = spawnSync(opts.node, ['--version'], { encoding: 'utf8' }).stdout.trim();

  const builds = table(['build', 'bundle KiB', 'RSS MiB (median)', 'heap used MiB']);
  const s3sqs =
    `import { sdk } from ${SDK};\nconst region = 'us-west-2';\n` +
    '(globalThis as Record<string, unknown>).clients = ' +
    `[new (sdk.s3().S3Client)({ region }), new (sdk.sqs().SQSClient)({ region })];\n${REPORT}`;
  const variants: Record<string, BuildOptions> = {
    'drill (not minified)': buildOptions({}),
    'shipped (whitespace and syntax minified)': buildOptions({ minify: true }),
    'identifiers minified too (shipped before)': { ...buildOptions({ minify: true }), minifyIdentifiers: true },
  };
  for (const [name, options] of Object.entries(variants)) {
    const m = await measure(opts.node, runs, `build-${name.split(' ')[0] ?? 'x'}`, s3sqs, options);
    builds.push([name, m.kib.toFixed(0), mib(m.rss), mib(m.heap)]);
  }
  console.log(`the S3 and SQS clients loaded from a node bundle, ${runs} fresh ${version} processes each:`);
  console.log(builds.toString());

  const shipped = buildOptions({ minify: true });
  const layers = table([
    'node process (as shipped: minified, names kept)',
    'bundle KiB',
    'RSS MiB (median)',
    'heap used MiB',
  ]);
  const rows: [string, string, BuildOptions, readonly string[]][] = [
    ['a bare Node', REPORT, shipped, []],
    [
      'the agent and worker code, the SDK stubbed out',
      NODE_CODE + REPORT,
      { ...shipped, plugins: [...(shipped.plugins ?? []), stubSdk] },
      [],
    ],
    ['the code with the S3, SQS and DynamoDB clients', NODE_CODE + CLIENTS + REPORT, shipped, []],
    [
      `the same with the units' ${DAEMON_NODE_FLAGS.join(' ')}`,
      NODE_CODE + CLIENTS + REPORT,
      shipped,
      DAEMON_NODE_FLAGS,
    ],
    [
      'the same with --enable-source-maps (map beside it)',
      NODE_CODE + CLIENTS + REPORT,
      buildOptions({ minify: true, sourcemap: true }),
      [...DAEMON_NODE_FLAGS, '--enable-source-maps'],
    ],
  ];
  for (const [i, [name, source, options, flags]] of rows.entries()) {
    const m = await measure(opts.node, runs, `layer-${i}`, source, options, flags);
    layers.push([name, m.kib.toFixed(0), mib(m.rss), mib(m.heap)]);
  }
  console.log(
    `what a node process is made of, loaded and settled (no requests sent), ${runs} fresh ${version} processes each:`,
  );
  console.log(layers.toString());
};

recorded('bundle-rss', "What a node process's memory is made of (bundle-rss)", main).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
