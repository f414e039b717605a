/**
 * What the fleet costs on AWS beyond its instances, measured on the local cloud: runs an idle
 * and a busy 2-node drill at default settings (time-scaled), counts every request by caller,
 * and prices at us-west-2 list prices (1) the control loop of an idle fleet per month and (2)
 * what each 1,000 tasks add on top. A month is a fleet's steady state, not its start: the idle
 * rate is what one run did in IDLE_SECONDS after WARM_SECONDS (its counters at the end less
 * those at the end of the warm-up), so the first writes of a node that just started (its
 * heartbeats, its role's trigger) do not weigh in it. Run: npx tsx bench/watchdog-cost.ts [time-scale] [--write]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Table from 'cli-table3';
import { configSchema } from '../lib/core/config';
import { parseScenario } from '../lib/core/drill/scenario';
import { alarmsMonthlyUsd, metricAlarms } from '../lib/core/metrics/alarms';
import { monthlyUsd, seriesAt } from '../lib/core/metrics/catalogue';
import { runDrill, type DrillStats } from '../lib/harness/drill/run';
import type { LocalCloud } from '../lib/harness/localcloud/cloud';
import { recorded } from './record';

// As in bin/fleet.js: the SDK's notice about Node versions is for long-lived installs, not a bench run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** us-west-2 list prices (USD), November 2026. */
const PRICE = {
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  sqs: 0.4 / 1_000_000,
  // On demand, per request unit (a write of up to 1 KB, a strongly consistent read of up to 4 KB), since November 2024.
  ddbWrite: 0.625 / 1_000_000,
  ddbRead: 0.125 / 1_000_000,
  sns: 0.5 / 1_000_000,
  lambdaRequest: 0.2 / 1_000_000,
  // A standard-resolution alarm on one metric, per month.
  alarm: 0.1,
  lambdaGbSecond: 0.0000166667,
};
/** The watchdog's memory as the stack deploys it (its `memorySize` in serverless.yml), in GB. */
const LAMBDA_GB = ((): number => {
  const text = readFileSync(join(__dirname, '..', 'serverless.yml'), 'utf8');
  const watchdog = text.slice(text.indexOf('\n  watchdog:\n'), text.indexOf('\n  notifier:\n'));
  const mb = Number(/\n {4}memorySize: (\d+)/.exec(watchdog)?.[1] ?? /\n {2}memorySize: (\d+)/.exec(text)?.[1]);
  if (!Number.isFinite(mb)) throw new Error('serverless.yml: no memorySize for the watchdog');
  return mb / 1024;
})();
/** The stack's CloudWatch alarms (resources/alarms.yml), each billed whether it fires or not. */
const ALARMS = (
  readFileSync(join(__dirname, '..', 'resources', 'alarms.yml'), 'utf8').match(/Type: AWS::CloudWatch::Alarm\b/g) ?? []
).length;
const MONTH_SECONDS = 720 * 3600;

type Counts = Record<'get' | 'put' | 'sqs' | 'rru' | 'wru' | 'sns' | 'ssm', number>;
const FIELDS = ['get', 'put', 'sqs', 'rru', 'wru', 'sns', 'ssm'] as const;
interface Measured {
  ok: boolean;
  seconds: number;
  callers: Map<string, Counts>;
  invocations: number;
  byTrigger: Record<string, number>;
  p95Ms: number;
  /**
   * What a run slept (for a late node, an SSM result, a DNS change), on average, at real time
   * (the drill's × its time scale).
   */
  sleepMs: number;
}

const countsOf = (c: Record<string, number>): Counts => ({
  get: (c['s3.GET'] ?? 0) + (c['s3.HEAD'] ?? 0),
  put: (c['s3.PUT'] ?? 0) + (c['s3.LIST'] ?? 0),
  sqs: c.sqs ?? 0,
  rru: c['dynamodb.RRU'] ?? 0,
  wru: c['dynamodb.WRU'] ?? 0,
  sns: c.sns ?? 0,
  ssm: c.ssm ?? 0,
});
const usdOf = (c: Counts): number =>
  c.get * PRICE.s3Get +
  c.put * PRICE.s3Put +
  c.sqs * PRICE.sqs +
  c.rru * PRICE.ddbRead +
  c.wru * PRICE.ddbWrite +
  c.sns * PRICE.sns;
/**
 * Billed duration at the p95 rounded up to 1 ms, at the deployed memory, a generous bound for the real Lambda,
 * plus the average sleep (for a late node, an SSM result, a DNS change) at real time: the drill
 * runs it `timeScale` times faster, and Lambda bills a sleeping run all the same.
 */
const lambdaUsd = (runs: number, m: Pick<Measured, 'p95Ms' | 'sleepMs'>): number =>
  runs * PRICE.lambdaRequest + runs * ((Math.ceil(m.p95Ms) + m.sleepMs) / 1000) * LAMBDA_GB * PRICE.lambdaGbSecond;
const combine = (f: (field: (typeof FIELDS)[number]) => number): Counts =>
  Object.fromEntries(FIELDS.map((k) => [k, f(k)])) as Counts;
const scaled = (c: Counts, k: number): Counts => combine((f) => c[f] * k);
const row = (c: Counts): number[] => FIELDS.map((f) => Math.round(c[f]));

/** The idle fleet's warm-up, left out of its monthly rate, and the steady span measured after it. */
const WARM_SECONDS = 300;
const IDLE_SECONDS = 1800;

const measured = (cloud: LocalCloud, stats: DrillStats, timeScale: number): Omit<Measured, 'ok'> => {
  const sorted = [...stats.invocationMs].sort((a, b) => a - b);
  return {
    seconds: stats.wallSeconds * timeScale,
    callers: new Map(
      [...cloud.callers.entries()]
        .filter(([name]) => name !== 'drill' && name !== 'anonymous')
        .map(([name, c]) => [name, countsOf(c)]),
    ),
    invocations: stats.invocations,
    byTrigger: { ...stats.byTrigger },
    p95Ms: sorted[Math.floor(sorted.length * 0.95)] ?? 0,
    sleepMs: stats.invocations === 0 ? 0 : (stats.sleptMs * timeScale) / stats.invocations,
  };
};

/** A 2-node fleet at default settings from cold; with `warmSeconds`, also what it had done by then. */
const measure = async (
  tasks: number,
  timeScale: number,
  seconds = 900,
  warmSeconds?: number,
): Promise<{ run: Measured; warm: Measured | null }> => {
  const scenario = parseScenario({
    name: `cost: 2-node fleet, ${tasks} tasks`,
    nodes: 2,
    seconds,
    workload: { tasks, meanTaskSeconds: 90, arrivalSeconds: Math.min(900, seconds) },
    expect: { restarts: 0, failovers: 0 },
  });
  let m: Omit<Measured, 'ok'> = { seconds: 0, callers: new Map(), invocations: 0, byTrigger: {}, p95Ms: 0, sleepMs: 0 };
  let warm: Omit<Measured, 'ok'> | null = null;
  const report = await runDrill(scenario, {
    timeScale,
    seed: 1,
    announce: false,
    ...(warmSeconds === undefined
      ? {}
      : {
          snapshot: {
            at: warmSeconds,
            take: (cloud: LocalCloud, stats: DrillStats) => (warm = measured(cloud, stats, timeScale)),
          },
        }),
    inspect: (cloud, stats) => (m = measured(cloud, stats, timeScale)),
  });
  const taken = warm as Omit<Measured, 'ok'> | null;
  return { run: { ok: report.ok, ...m }, warm: taken === null ? null : { ok: report.ok, ...taken } };
};

/** The steady idle rate: the run's end less its warm-up, request by request and run by run. */
const steady = (short: Measured, long: Measured): Measured => {
  const callers = new Map<string, Counts>();
  for (const [caller, c] of long.callers) {
    const before = short.callers.get(caller) ?? countsOf({});
    callers.set(
      caller,
      combine((f) => c[f] - before[f]),
    );
  }
  const byTrigger = Object.fromEntries(
    Object.entries(long.byTrigger).map(([kind, n]) => [kind, n - (short.byTrigger[kind] ?? 0)]),
  );
  return {
    ok: short.ok && long.ok,
    seconds: long.seconds - short.seconds,
    callers,
    invocations: long.invocations - short.invocations,
    byTrigger,
    p95Ms: long.p95Ms,
    sleepMs: long.sleepMs,
  };
};

const main = async (): Promise<void> => {
  const timeScale = Number(process.argv[2] ?? '20');
  const { run: idleRun, warm } = await measure(0, timeScale, WARM_SECONDS + IDLE_SECONDS, WARM_SECONDS);
  if (warm === null) throw new Error('the idle run took no snapshot at the end of its warm-up');
  const idle = steady(warm, idleRun);
  /** What the idle fleet's caller does in `seconds` from cold: its warm-up, then its steady rate. */
  const idleFor = (caller: string, seconds: number): Counts => {
    const before = warm.callers.get(caller) ?? countsOf({});
    const rate = idle.callers.get(caller) ?? countsOf({});
    return combine((f) => before[f] + rate[f] * ((seconds - warm.seconds) / idle.seconds));
  };
  // 24 tasks of about 90 s in 15 minutes keep the primary's two slots busy throughout.
  const tasks = 24;
  const { run: busy } = await measure(tasks, timeScale);
  const head = ['caller', 'S3 GET', 'S3 PUT', 'SQS', 'DynamoDB RRU', 'DynamoDB WRU', 'SNS', 'SSM', 'USD'];
  const style = { head: [], border: [] };

  const perMonth = MONTH_SECONDS / idle.seconds;
  const month = new Table({ head, style });
  let total = 0;
  for (const [caller, c] of [...idle.callers.entries()].sort()) {
    const usd = usdOf(scaled(c, perMonth));
    total += usd;
    month.push([caller, ...row(scaled(c, perMonth)), usd.toFixed(2)]);
  }
  const runs = idle.invocations * perMonth;
  total += lambdaUsd(runs, idle);
  // The Lambda's and the alarms' lines have no request counts: their cost is in runs and alarms.
  const blank = Array<string>(6).fill('');
  const lambdaLine = `${Math.round(runs)} runs, ${Math.round(LAMBDA_GB * 1024)} MB`;
  month.push(['watchdog Lambda', ...blank, lambdaLine, lambdaUsd(runs, idle).toFixed(2)]);
  total += ALARMS * PRICE.alarm;
  month.push(['CloudWatch alarms', ...blank, `${ALARMS} alarms`, (ALARMS * PRICE.alarm).toFixed(2)]);

  // What the tasks add: the busy run's requests less the idle rate over the busy run's length.
  const perThousand = 1000 / tasks;
  const work = new Table({ head, style });
  let workTotal = 0;
  for (const [caller, c] of [...busy.callers.entries()].sort()) {
    // The busy run starts cold too: its base is what the idle fleet did in as long from cold,
    // its warm-up and then its steady rate.
    const base = idleFor(caller, busy.seconds);
    const extra = scaled(
      combine((f) => c[f] - base[f]),
      perThousand,
    );
    const usd = usdOf(extra);
    workTotal += usd;
    work.push([caller, ...row(extra), usd.toFixed(2)]);
  }
  const extraRuns =
    (busy.invocations - (warm.invocations + idle.invocations * ((busy.seconds - warm.seconds) / idle.seconds))) *
    perThousand;
  const extraUsd = lambdaUsd(Math.max(0, extraRuns), busy);
  workTotal += extraUsd;
  work.push(['watchdog Lambda', ...blank, `${Math.round(extraRuns)} runs`, extraUsd.toFixed(2)]);

  const triggers = Object.entries(idle.byTrigger)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${Math.round(n * perMonth)}`)
    .join(', ');
  console.log(
    `idle fleet: ${idle.seconds.toFixed(0)} s at ×${timeScale} after ${WARM_SECONDS} s of warm-up, ok=${idle.ok}, ` +
      `${idle.invocations} watchdog runs (a month: ${triggers}), p95 ${idle.p95Ms.toFixed(1)} ms, ` +
      `${(idle.sleepMs / 1000).toFixed(2)} s asleep a run on average at real time ` +
      '(a late node, an SSM result, a DNS change); per month:',
  );
  console.log(month.toString());
  console.log(
    `control loop ≈ $${total.toFixed(2)} per month for 2 nodes ` +
      "(before the free tier; Lambda's and the agents' logs not counted)",
  );
  console.log(
    `busy fleet: ${tasks} tasks in ${busy.seconds.toFixed(0)} s at ×${timeScale}, ok=${busy.ok}; ` +
      'what 1,000 tasks add:',
  );
  console.log(work.toString());
  console.log(`tasks ≈ $${workTotal.toFixed(2)} per 1,000 (before the free tier)`);
  printMetrics();
};

/**
 * The `metrics` setting's own line: its custom metrics and the alarms on them, for 2
 * and 3 nodes; the dashboard apart.
 */
const printMetrics = (): void => {
  const settings = {
    standbyAlarmMinutes: 10,
    stallAlarmMinutes: 10,
    heartbeatAlarmSeconds: 120,
    stallSamples: configSchema.parse({}).stallSamples,
  };
  const table = new Table({
    head: ['metrics', 'nodes', 'custom metrics', 'USD', 'alarms on them', 'USD', 'together'],
    style: { head: [], border: [] },
  });
  for (const level of ['off', 'essential', 'detailed'] as const) {
    for (const nodes of [2, 3]) {
      const metrics = monthlyUsd(level, nodes);
      const alarms = alarmsMonthlyUsd(level, nodes, settings);
      const count = metricAlarms(
        level,
        Array.from({ length: nodes }, (_, i) => `node-${i + 1}`),
        settings,
      ).length;
      table.push([
        level,
        nodes,
        seriesAt(level, nodes),
        metrics.toFixed(2),
        count,
        alarms.toFixed(2),
        (metrics + alarms).toFixed(2),
      ]);
    }
  }
  console.log(
    'the metrics setting, per month at list price ' +
      '(its own line: not in the control loop above; essential is the default):',
  );
  console.log(table.toString());
  console.log("the CloudWatch dashboard (dashboard: true): $3.00 per month beyond an account's first three");
};

void recorded('watchdog-cost', 'What the fleet costs to run (watchdog-cost)', main);
