/**
 * How fast the fleet heals on the faithful local cloud: runs each scenario below over several
 * seeds (×20, one at a time) and prints, per scenario, the spread of the times docs/healing.md
 * quotes: stall verdict after the window closed, detection, promotion, serving, traffic (the
 * origin record moved) and INSYNC, all in scenario seconds from the fault.
 * Run: npx tsx bench/healing-times.ts [seeds=5] [scenario…] [--write] (every scenario below unless named)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Table from 'cli-table3';
import { parseScenario } from '../lib/core/drill/scenario';
import type { Incident, Report } from '../lib/core/drill/report';
import { runDrill } from '../lib/harness/drill/run';
import { recorded } from './record';

// As in bin/fleet.js: the SDK's notice about Node versions is for long-lived installs, not a bench run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const SCENARIOS = [
  'stall-recovers-after-restart',
  'notification-lag-stall',
  'kill-primary',
  'kill-agent-primary',
  'three-nodes-kill-primary',
  'freeze-primary',
  'stop-primary',
  'partition-primary',
];
const TIME_SCALE = 20;

type Measure = 'verdict' | 'detected' | 'promoted' | 'serving' | 'traffic' | 'insync';
const MEASURES: Record<Measure, (i: Incident) => number | null> = {
  verdict: (i) => (i.windowAt === null || i.detectedAt === null ? null : i.detectedAt - i.windowAt),
  detected: (i) => (i.detectedAt === null ? null : i.detectedAt - i.faultAt),
  promoted: (i) => (i.failoverAt === null ? null : i.failoverAt - i.faultAt),
  serving: (i) => (i.servingAt === null ? null : i.servingAt - i.faultAt),
  traffic: (i) => (i.trafficAt === null ? null : i.trafficAt - i.faultAt),
  insync: (i) => (i.trafficInsyncAt === null ? null : i.trafficInsyncAt - i.faultAt),
};

const spread = (xs: number[]): string => {
  if (xs.length === 0) return '–';
  const s = [...xs].sort((a, b) => a - b);
  const med = s[Math.floor(s.length / 2)] ?? 0;
  return `${(s[0] ?? 0).toFixed(1)} / ${med.toFixed(1)} / ${(s.at(-1) ?? 0).toFixed(1)}`;
};

/** The checks a failed drill missed, by name. */
const failures = (report: Report): string =>
  [
    ...Object.entries(report.invariants)
      .filter(([, ok]) => !ok)
      .map(([name]) => name),
    ...report.expectations.filter((e) => !e.ok).map((e) => e.name),
  ].join(', ');

const main = async (): Promise<void> => {
  const seeds = Number(process.argv[2] ?? '5');
  const table = new Table({
    head: ['scenario', 'passed', ...Object.keys(MEASURES).map((m) => `${m} (min/med/max s)`)],
    style: { head: [], border: [] },
  });
  const named = process.argv.slice(3);
  const unknown = named.filter((n) => !SCENARIOS.includes(n));
  if (unknown.length > 0)
    throw new Error(`not a scenario of this bench: ${unknown.join(', ')} (one of ${SCENARIOS.join(', ')})`);
  for (const name of named.length > 0 ? named : SCENARIOS) {
    const scenario = parseScenario(
      JSON.parse(readFileSync(join(__dirname, '..', 'tests', 'scenarios', `${name}.json`), 'utf8')),
    );
    const values: Record<Measure, number[]> = {
      verdict: [],
      detected: [],
      promoted: [],
      serving: [],
      traffic: [],
      insync: [],
    };
    let passed = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const report = await runDrill(scenario, { timeScale: TIME_SCALE, seed, announce: false });
      if (report.ok) passed++;
      const verdict = report.ok
        ? 'passed'
        : `FAILED (${failures(report)}; ${report.tasks.completed}/${report.tasks.enqueued} tasks completed)`;
      process.stderr.write(`${name} seed ${seed}: ${verdict}\n`);
      const incident = report.incidents.find((i) => i.watched);
      if (incident === undefined) continue;
      for (const [m, f] of Object.entries(MEASURES) as [Measure, (i: Incident) => number | null][]) {
        const v = f(incident);
        if (v !== null) values[m].push(v);
      }
    }
    table.push([name, `${passed}/${seeds}`, ...Object.keys(MEASURES).map((m) => spread(values[m as Measure]))]);
  }
  console.log(
    `healing times on the faithful local cloud, ×${TIME_SCALE}, seeds 1–${seeds} ` +
      '(scenario seconds from the fault; verdict from the close of the stall window)',
  );
  console.log(table.toString());
};

void recorded('healing-times', 'How fast the fleet heals (healing-times)', main);
