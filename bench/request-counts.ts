/**
 * The fleet's request counts, the figures CI guards: runs tests/scenarios/steady-no-fault.json
 * (2 nodes, 12 tasks, no fault, the faithful local cloud) at ×20, as the drill test does, and
 * prints the control loop's requests per scenario hour and the work's per completed task, each
 * against bench/request-baseline.json. Counts, not times.
 *
 *   npx tsx bench/request-counts.ts                 seed 1, compared with the baseline
 *   npx tsx bench/request-counts.ts --seeds 1,2,3   several runs: how much the counts move
 *   npx tsx bench/request-counts.ts --update        writes the baseline from the runs (their mean)
 *   npx tsx bench/request-counts.ts --write         and its section of docs/measurements.md
 *
 * Exits 1 when a figure is more than 25% above its baseline.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Table from 'cli-table3';
import { parseScenario } from '../lib/core/drill/scenario';
import { mapUnits, regressions, type RequestFigures, type RequestUnits } from '../lib/core/drill/requests';
import { runDrill } from '../lib/harness/drill/run';
import { recorded } from './record';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ROOT = join(__dirname, '..');
const BASELINE_FILE = join(ROOT, 'bench/request-baseline.json');
const SCENARIO = join(ROOT, 'tests/scenarios/steady-no-fault.json');
const TIME_SCALE = 20;

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};

const mean = (all: RequestUnits[]): RequestUnits =>
  mapUnits((u) => Math.round((all.reduce((s, x) => s + x[u], 0) / all.length) * 10) / 10);

const main = async (): Promise<void> => {
  const seeds = (arg('--seeds') ?? '1').split(',').map(Number);
  const scenario = parseScenario(JSON.parse(readFileSync(SCENARIO, 'utf8')));
  const runs: RequestFigures[] = [];
  for (const seed of seeds) {
    const report = await runDrill(scenario, { timeScale: TIME_SCALE, seed, announce: false });
    if (!report.ok) {
      const failed = [
        ...report.expectations
          .filter((e) => !e.ok)
          .map((e) => `${e.name}: expected ${JSON.stringify(e.expected)}, actual ${JSON.stringify(e.actual)}`),
        ...Object.entries(report.invariants)
          .filter(([, ok]) => !ok)
          .map(([name]) => `invariant ${name}`),
      ];
      throw new Error(`steady-no-fault failed at seed ${seed} (${failed.join('; ')}): its counts measure nothing`);
    }
    runs.push(report.requests);
    console.log(
      `seed ${seed}: ${report.tasks.completed} tasks in ${Math.round(report.wallSeconds * TIME_SCALE)} scenario s`,
    );
  }
  const none = mapUnits(() => 0);
  const baseline = existsSync(BASELINE_FILE)
    ? (JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as Pick<RequestFigures, 'perHour' | 'perTask'>)
    : { perHour: none, perTask: none };
  const table = new Table({
    head: ['figure', 'baseline', ...seeds.map((s) => `seed ${s}`)],
    style: { head: [], border: [] },
  });
  for (const scope of ['perHour', 'perTask'] as const) {
    for (const u of Object.keys(none) as (keyof RequestUnits)[])
      table.push([`${scope}.${u}`, baseline[scope][u], ...runs.map((r) => r[scope][u])]);
  }
  console.log(table.toString());
  if (process.argv.includes('--update')) {
    const next = {
      command: 'npx tsx bench/request-counts.ts --update',
      seeds,
      perHour: mean(runs.map((r) => r.perHour)),
      perTask: mean(runs.map((r) => r.perTask)),
    };
    writeFileSync(BASELINE_FILE, `${JSON.stringify(next, null, 2)}\n`);
    console.log(`baseline written: ${BASELINE_FILE}`);
    return;
  }
  const found = runs.flatMap((r, i) => regressions(r, baseline).map((g) => ({ seed: seeds[i], ...g })));
  for (const g of found)
    console.log(`REGRESSION seed ${g.seed}: ${g.figure} ${g.actual} against ${g.baseline} (×${g.ratio})`);
  if (found.length > 0) process.exitCode = 1;
};

void recorded('request-counts', 'Request counts, the figures CI guards (request-counts)', main);
