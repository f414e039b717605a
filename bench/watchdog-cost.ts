/**
 * What the fleet's control loop costs on AWS, measured on the local cloud: runs a healthy
 * 2-node drill at default settings (time-scaled), counts every request by caller, and turns
 * the rates into a month at us-west-2 list prices. Run: npx tsx bench/watchdog-cost.ts
 */
import Table from 'cli-table3';
import { parseScenario } from '../lib/core/scenario';
import { runDrill } from '../lib/drill/run';

/** us-west-2 list prices (USD), November 2026. */
const PRICE = {
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  sqs: 0.4 / 1_000_000,
  sns: 0.5 / 1_000_000,
  lambdaRequest: 0.2 / 1_000_000,
  lambdaGbSecond: 0.0000166667,
};
const LAMBDA_GB = 0.128;
const MONTH_HOURS = 720;

const main = async (): Promise<void> => {
  const timeScale = Number(process.argv[2] ?? '20');
  const scenario = parseScenario({ name: 'cost: healthy 2-node fleet', nodes: 2, seconds: 900, workload: { tasks: 24, meanTaskSeconds: 90, arrivalSeconds: 900 }, expect: { restarts: 0 } });
  let callers = new Map<string, Record<string, number>>();
  let invocationMs: number[] = [];
  let scenarioSeconds = 0;
  let invocations = 0;
  const report = await runDrill(scenario, {
    timeScale,
    seed: 1,
    inspect: (cloud, stats) => {
      callers = new Map(cloud.callers);
      invocationMs = stats.invocationMs;
      invocations = stats.invocations;
      scenarioSeconds = stats.wallSeconds * timeScale;
    },
  });
  const perMonth = (n: number): number => (n / (scenarioSeconds / 3600)) * MONTH_HOURS;
  const table = new Table({ head: ['caller', 'S3 GET/mo', 'S3 PUT/mo', 'SQS/mo', 'SNS/mo', 'SSM/mo', 'USD/mo'], style: { head: [], border: [] } });
  let total = 0;
  for (const [caller, c] of [...callers.entries()].filter(([name]) => name !== 'drill' && name !== 'anonymous').sort()) {
    const get = perMonth((c['s3.GET'] ?? 0) + (c['s3.HEAD'] ?? 0));
    const put = perMonth((c['s3.PUT'] ?? 0) + (c['s3.LIST'] ?? 0));
    const sqs = perMonth(c.sqs ?? 0);
    const sns = perMonth(c.sns ?? 0);
    const usd = get * PRICE.s3Get + put * PRICE.s3Put + sqs * PRICE.sqs + sns * PRICE.sns;
    total += usd;
    table.push([caller, Math.round(get), Math.round(put), Math.round(sqs), Math.round(sns), Math.round(perMonth(c.ssm ?? 0)), usd.toFixed(2)]);
  }
  const sorted = [...invocationMs].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
  const lambdaPerMonth = perMonth(invocations);
  // Billed duration at p95 rounded up to 1 ms, 128 MB: a generous bound for the real Lambda.
  const lambdaUsd = lambdaPerMonth * PRICE.lambdaRequest + lambdaPerMonth * (Math.ceil(p95) / 1000) * LAMBDA_GB * PRICE.lambdaGbSecond;
  total += lambdaUsd;
  table.push(['watchdog Lambda', '', '', '', '', `${Math.round(lambdaPerMonth)} runs`, lambdaUsd.toFixed(2)]);
  console.log(`scenario ${scenario.seconds}s at ×${timeScale}: ok=${report.ok}, ${invocations} watchdog runs, in-process duration p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
  console.log(table.toString());
  console.log(`total ≈ $${total.toFixed(2)} per month for 2 nodes (before the free tier)`);
};

void main();
