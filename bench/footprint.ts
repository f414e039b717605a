/**
 * The fleet's footprint, against its targets: each function's zip as `sls package` writes
 * it, each function's cold start (its bundle loaded in a fresh Node process, as a Lambda init
 * does), and the resident memory of the agent and the worker on each node of a running drill.
 * Run: npx tsx bench/footprint.ts [--package DIR] [--node PATH] [--runs N] [--time-scale K] [--write]
 *   --package DIR  read the zips there instead of packaging again (.tmp/package-ci after CI)
 *   --node PATH    the Node binary to load the bundles with (the Lambda runs Node 22)
 *   --no-drill     the functions only
 *   --node-args S  Node options for the agents and workers of the drill (V8 flags to weigh);
 *                  by default the units' own (DAEMON_NODE_FLAGS), "" for none; the drill runs
 *                  them on this bench's Node
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Table from 'cli-table3';
import { Command } from 'commander';
import { parseScenario } from '../lib/core/drill/scenario';
import { runDrill } from '../lib/harness/drill/run';
import { DAEMON_NODE_FLAGS } from '../lib/harness/localcloud/bundle';
import { processesWithMark, UNIT_MARK } from '../lib/harness/localcloud/processes';
import { lambdaLikeDir } from '../lib/deploy/lambda-dir';
import { unpackZip, zipEntries } from '../lib/deploy/zip';
import { recorded } from './record';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ROOT = resolve(__dirname, '..');
const WORK = join(ROOT, '.tmp', 'footprint');
const FUNCTIONS = ['watchdog', 'notifier', 'replay'] as const;
export const TARGETS = { zipBytes: 250 * 1024, coldStartMs: 300, agentRssMb: 60, idleWorkerRssMb: 60 };

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] ?? Number.NaN);
};
const mark = (ok: boolean): string => (ok ? 'ok' : 'OVER');

/** Packages the service the way CI does, TMPDIR in the workspace (serverless-esbuild leaves folders there). */
const packageService = (dir: string): void => {
  const tmp = join(ROOT, '.tmp', 'tmpdir');
  mkdirSync(tmp, { recursive: true });
  execFileSync(join(ROOT, 'node_modules', '.bin', 'sls'), ['package', '--stage', 'bench', '--package', dir], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, TMPDIR: tmp },
  });
};

/**
 * One cold start: a fresh process loads the handler's bundle, the SDK found through NODE_PATH in
 * the unpacked layer only, as on Lambda. `total` runs from the process's time origin (Node's own
 * start included) to the bundle loaded, `load` is the require alone.
 */
const LOADER =
  'const t=performance.now();require(process.argv[1]);const l=performance.now();' +
  'process.stdout.write(JSON.stringify({load:l-t,total:l,rss:process.memoryUsage().rss}))';
const coldStart = (
  node: string,
  bundle: string,
  nodePath: string,
  runs: number,
): { load: number; total: number; rssMb: number } => {
  const got: { load: number; total: number; rss: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const res = spawnSync(node, ['-e', LOADER, bundle], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: nodePath,
        AWS_REGION: 'us-west-2',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    if (res.status !== 0) throw new Error(`loading ${bundle} failed: ${res.stderr}`);
    got.push(JSON.parse(res.stdout) as { load: number; total: number; rss: number });
  }
  return {
    load: median(got.map((g) => g.load)),
    total: median(got.map((g) => g.total)),
    rssMb: median(got.map((g) => g.rss)) / 2 ** 20,
  };
};

const rssMb = (pid: number): number | null => {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
};
const commandOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
};

/**
 * Every `everyMs`, the RSS of each node's agent and worker processes (their unit mark names the
 * node's directory and the unit; stage commands, which carry the mark too, are left out).
 */
const sampleRss = (everyMs: number): { stop: () => Map<string, number[]> } => {
  const series = new Map<string, number[]>();
  const timer = setInterval(() => {
    for (const { pid, value } of processesWithMark(UNIT_MARK)) {
      const unit = /([^/]+)\/(agent|worker)$/.exec(value);
      if (unit === null || !commandOf(pid).includes(`${unit[2]}.js`)) continue;
      const mb = rssMb(pid);
      if (mb === null) continue;
      const key = `${unit[1]} ${unit[2]}`;
      series.set(key, [...(series.get(key) ?? []), mb]);
    }
  }, everyMs);
  return { stop: () => (clearInterval(timer), series) };
};

const main = async (): Promise<void> => {
  const opts = new Command()
    .option('--package <dir>', 'read the zips from this sls package output')
    .option('--node <path>', 'Node binary for the cold starts', process.execPath)
    .option('--runs <n>', 'cold starts per function', '7')
    .option('--time-scale <k>', 'drill time scale for the RSS run', '10')
    .option('--no-drill', 'functions only: no drill, no RSS of the node processes')
    .option(
      '--node-args <flags>',
      'Node options for the drill\'s agents and workers ("" for none)',
      DAEMON_NODE_FLAGS.join(' '),
    )
    .parse()
    .opts<{ package?: string; node: string; runs: string; timeScale: string; drill: boolean; nodeArgs: string }>();

  const dir = resolve(opts.package ?? join(WORK, 'package'));
  if (opts.package === undefined) {
    console.log(`packaging the service into ${dir} …`);
    packageService(dir);
  }
  const nodeVersion = execFileSync(opts.node, ['--version'], { encoding: 'utf8' }).trim();
  const fns = new Table({
    head: ['function', 'zip KiB', 'bundle KiB', 'cold start ms (load)', 'RSS MiB after load', 'zip', 'cold start'],
    style: { head: [], border: [] },
  });
  // Where the bundles are loaded from: no node_modules above it, so nothing resolves but from the layer.
  const lambda = lambdaLikeDir('qf-footprint-');
  process.once('exit', () => rmSync(lambda, { recursive: true, force: true }));
  const layerZip = join(dir, 'awsSdk.zip');
  unpackZip(layerZip, join(lambda, 'opt'));
  const nodePath = join(lambda, 'opt', 'nodejs', 'node_modules');
  for (const fn of FUNCTIONS) {
    const zip = join(dir, `${fn}.zip`);
    const entry = zipEntries(zip).find((e) => e.name === `functions/${fn}/handler.js`);
    if (entry === undefined) throw new Error(`${zip}: no functions/${fn}/handler.js`);
    unpackZip(zip, join(lambda, fn));
    const bundle = join(lambda, fn, entry.name);
    const zipBytes = statSync(zip).size;
    const cold = coldStart(opts.node, bundle, nodePath, Number(opts.runs));
    fns.push([
      fn,
      (zipBytes / 1024).toFixed(0),
      (entry.size / 1024).toFixed(0),
      `${cold.total.toFixed(0)} (${cold.load.toFixed(0)})`,
      cold.rssMb.toFixed(0),
      mark(zipBytes <= TARGETS.zipBytes),
      mark(cold.total <= TARGETS.coldStartMs),
    ]);
  }
  console.log(
    `functions (cold start: median of ${opts.runs} fresh ${nodeVersion} processes, ` +
      'from process start to bundle loaded; ' +
      `targets: zip ≤ ${TARGETS.zipBytes / 1024} KiB, cold start ≤ ${TARGETS.coldStartMs} ms):`,
  );
  console.log(fns.toString());
  console.log(`the AWS SDK layer (shared by the three): ${(statSync(layerZip).size / 1024).toFixed(0)} KiB zipped`);

  if (!opts.drill) return;
  const timeScale = Number(opts.timeScale);
  // Busy for the first half (the primary's two slots full), idle for the second: both workers' shapes.
  const scenario = parseScenario({
    name: 'footprint: 2-node fleet, busy then idle',
    nodes: 2,
    seconds: 600,
    workload: { tasks: 8, meanTaskSeconds: 60, arrivalSeconds: 240 },
    expect: { restarts: 0, failovers: 0 },
  });
  console.log(`running a 2-node drill (${scenario.seconds} s at ×${timeScale}) and sampling RSS every second …`);
  const sampler = sampleRss(1000);
  const nodeArgs = opts.nodeArgs.split(' ').filter((a) => a !== '');
  const report = await runDrill(scenario, { timeScale, seed: 1, announce: false, nodeArgs });
  const series = sampler.stop();
  const procs = new Table({
    head: ['process', 'samples', 'median MiB', 'peak MiB', 'target'],
    style: { head: [], border: [] },
  });
  for (const [key, mbs] of [...series.entries()].sort()) {
    const target = key.endsWith('agent') ? TARGETS.agentRssMb : TARGETS.idleWorkerRssMb;
    // The standby's worker never consumes: it is the idle worker the target speaks of.
    const idle = key.endsWith('worker') && !key.startsWith('node-1');
    const judged = key.endsWith('agent') || idle ? mark(Math.max(...mbs) <= target) : '(busy: reported)';
    procs.push([key, mbs.length, median(mbs).toFixed(1), Math.max(...mbs).toFixed(1), judged]);
  }
  console.log(
    `drill ok=${report.ok}; RSS on ${process.version}` +
      `${nodeArgs.length === 0 ? ' with no Node options' : ` with ${nodeArgs.join(' ')}`} ` +
      `(targets: agent ≤ ${TARGETS.agentRssMb} MiB, idle worker ≤ ${TARGETS.idleWorkerRssMb} MiB):`,
  );
  console.log(procs.toString());
};

void recorded('footprint', "The functions' and the nodes' footprint (footprint)", main).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
