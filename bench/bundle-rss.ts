/**
 * What a node bundle's build options cost in memory: the fleet's own S3 and SQS clients
 * (`lib/aws/sdk.ts`, as the agent and the worker load them), bundled as the drills bundle the
 * nodes, as `bin/build-agent.ts` ships them, and with identifiers minified too (as it shipped
 * before), each loaded in fresh Node processes, RSS and heap read after a full GC.
 * Run: npx tsx bench/bundle-rss.ts [--runs N] [--node PATH]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Table from 'cli-table3';
import { Command } from 'commander';
import { build } from 'esbuild';
import { buildOptions } from '../lib/harness/localcloud/bundle';

const ROOT = resolve(__dirname, '..');
const WORK = join(ROOT, '.tmp', 'bundle-rss');

const ENTRY = `import { sdk } from ${JSON.stringify(join(ROOT, 'lib', 'aws', 'sdk'))};
const region = 'us-west-2';
const clients = [new (sdk.s3().S3Client)({ region }), new (sdk.sqs().SQSClient)({ region })];
setTimeout(() => {
  global.gc?.();
  const m = process.memoryUsage();
  process.stdout.write(JSON.stringify({ rss: m.rss, heap: m.heapUsed, clients: clients.length }));
}, 200);
`;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

const main = async (): Promise<void> => {
  const opts = new Command().option('--runs <n>', 'fresh processes per variant', '5').option('--node <path>', 'the Node binary to load them with', process.execPath).parse().opts<{ runs: string; node: string }>();
  mkdirSync(WORK, { recursive: true });
  const entry = join(WORK, 'entry.ts');
  writeFileSync(entry, ENTRY);
  const variants = {
    'drill (not minified)': buildOptions({}),
    'shipped (whitespace and syntax minified)': buildOptions({ minify: true }),
    'identifiers minified too (shipped before)': { ...buildOptions({ minify: true }), minifyIdentifiers: true },
  };
  const table = new Table({ head: ['build', 'bundle KiB', 'RSS MiB (median)', 'heap used MiB'], style: { head: [], border: [] } });
  for (const [name, options] of Object.entries(variants)) {
    const out = join(WORK, `${name.split(' ')[0] ?? 'x'}.js`);
    await build({ ...options, entryPoints: [entry], outfile: out });
    const got: { rss: number; heap: number }[] = [];
    for (let i = 0; i < Number(opts.runs); i++) {
      const res = spawnSync(opts.node, ['--expose-gc', out], { encoding: 'utf8', cwd: WORK, env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
      if (res.status !== 0) throw new Error(`${name}: ${res.stderr}`);
      got.push(JSON.parse(res.stdout) as { rss: number; heap: number });
    }
    table.push([name, (statSync(out).size / 1024).toFixed(0), (median(got.map((g) => g.rss)) / 2 ** 20).toFixed(1), (median(got.map((g) => g.heap)) / 2 ** 20).toFixed(1)]);
  }
  const version = spawnSync(opts.node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`the S3 and SQS clients loaded from a node bundle, ${opts.runs} fresh ${version} processes each:`);
  console.log(table.toString());
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
