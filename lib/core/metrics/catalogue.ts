/**
 * The fleet's custom CloudWatch metrics, in one place: the watchdog's publisher, the table of
 * docs/operations.md and the tests read this list. CloudWatch bills each custom metric, each name
 * and dimension combination, at $0.30 a month (CloudWatch pricing, "Metrics": the first 10,000
 * metrics), so every one here has a reason and a level, and none has a dimension that grows with
 * time (no task id, no epoch): only the node, of which a fleet has a handful.
 */

/** How much the watchdog publishes: nothing, the few that explain a failover, or all below. */
export const METRIC_LEVELS = ['off', 'essential', 'detailed'] as const;
export type MetricLevel = (typeof METRIC_LEVELS)[number];

/**
 * Where the fleet's metrics live in CloudWatch; each fleet is told apart by its `Fleet` dimension (its state bucket).
 */
export const METRICS_NAMESPACE = 'QueensFleet';

/** CloudWatch's list price of one custom metric a month (us-west-2, the first 10,000). */
export const METRIC_USD_MONTH = 0.3;

export type MetricUnit = 'Seconds' | 'Count' | 'Percent' | 'Bytes' | 'None';

export interface MetricSpec {
  name: string;
  unit: MetricUnit;
  /** `node`: one series per node (dimensions Fleet, Node); `fleet`: one series (dimension Fleet). */
  scope: 'node' | 'fleet';
  /** The lowest `metrics` setting that publishes it. */
  level: Exclude<MetricLevel, 'off'>;
  /** The statistic a dashboard or an alarm should read it by. */
  statistic: 'Maximum' | 'Minimum' | 'Average' | 'Sum';
  meaning: string;
}

export const CATALOGUE: readonly MetricSpec[] = [
  {
    name: 'HeartbeatAge',
    unit: 'Seconds',
    scope: 'node',
    level: 'essential',
    statistic: 'Maximum',
    meaning:
      "Seconds since the watchdog last saw a new sample from the node, by the watchdog's own clock (never the " +
      "node's): the dead-node clock. None for a cordoned node.",
  },
  {
    name: 'FailingSamples',
    unit: 'Count',
    scope: 'node',
    level: 'essential',
    statistic: 'Maximum',
    meaning:
      'Failing samples in a row, as the stall rule counted them (the most this run reached: a restart starts the ' +
      'count again); the verdict comes at stallSamples (8). None for a cordoned node.',
  },
  {
    name: 'ReadyStandbys',
    unit: 'Count',
    scope: 'fleet',
    level: 'essential',
    statistic: 'Minimum',
    meaning:
      'Standbys that could take over now (fresh heartbeat, proven worker, current epoch, no incident): 0 is ' +
      'lost redundancy. None while a node is cordoned: its alarm would only repeat the cordon.',
  },
  {
    name: 'Epoch',
    unit: 'None',
    scope: 'fleet',
    level: 'essential',
    statistic: 'Maximum',
    meaning: 'The lease epoch: each step up is a change of primary.',
  },
  {
    name: 'Primary',
    unit: 'None',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning: '1 while the lease names the node, else 0.',
  },
  {
    name: 'InFlight',
    unit: 'Count',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning: "Tasks in the node's newest sample that its worker is running.",
  },
  {
    name: 'Completions',
    unit: 'Count',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning:
      'Tasks the node completed in its completion window (completionWindowSeconds, 5 min), by its newest sample.',
  },
  {
    name: 'WorkerCpu',
    unit: 'Percent',
    scope: 'node',
    level: 'detailed',
    statistic: 'Average',
    meaning:
      "The worker's CPU, by the node's newest sample (the primary's only when its heartbeat carries it: a quiet " +
      "primary's samples ride on its lease renewals, without it).",
  },
  {
    name: 'WorkerMemory',
    unit: 'Bytes',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning:
      "The worker's resident memory, by the node's newest sample (the primary's only when its heartbeat carries it).",
  },
  {
    name: 'PeerSyncSeconds',
    unit: 'Seconds',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning:
      "How long the agent's last peer-sync round of the task manifest took, by the node's newest sample (the " +
      "primary's only when its heartbeat carries it).",
  },
  {
    name: 'CasConflicts',
    unit: 'Count',
    scope: 'node',
    level: 'detailed',
    statistic: 'Maximum',
    meaning:
      'Conditional writes of the agent (manifest and lease) that lost their race to another writer in its ' +
      'completion window (5 min), by its newest sample: a few are normal (a failover costs the old primary one), a ' +
      'steady climb is nodes fighting over the manifest or the lease.',
  },
  {
    name: 'LeaseSecondsLeft',
    unit: 'Seconds',
    scope: 'node',
    level: 'detailed',
    statistic: 'Minimum',
    meaning:
      "Seconds the primary's lease had left at its newest sample, by its own monotonic clock (only the primary " +
      'gives it, when its heartbeat carries that sample): at 0 it is fencing itself.',
  },
  {
    name: 'IncidentsOpened',
    unit: 'Count',
    scope: 'fleet',
    level: 'detailed',
    statistic: 'Sum',
    meaning: 'Incidents the watchdog opened (a stall, a silent or lost node, an unready standby).',
  },
  {
    name: 'Restarts',
    unit: 'Count',
    scope: 'fleet',
    level: 'detailed',
    statistic: 'Sum',
    meaning:
      'Worker restarts the watchdog claimed, of a stalled primary or of a standby to make it rejoin (its restart ' +
      'budgets).',
  },
  {
    name: 'Failovers',
    unit: 'Count',
    scope: 'fleet',
    level: 'detailed',
    statistic: 'Sum',
    meaning: 'Failovers the watchdog claimed (each starts its cooldown).',
  },
  {
    name: 'Paused',
    unit: 'None',
    scope: 'fleet',
    level: 'essential',
    statistic: 'Maximum',
    meaning: '1 while the automation is paused (fleet pause): steps are alerted, nothing is restarted or failed over.',
  },
  {
    name: 'InputHeld',
    unit: 'None',
    scope: 'fleet',
    level: 'detailed',
    statistic: 'Maximum',
    meaning: "1 while admission holds producers' input in the intake queue, else 0.",
  },
];

/** The metrics a setting publishes. */
export const publishedAt = (level: MetricLevel): MetricSpec[] =>
  level === 'off' ? [] : CATALOGUE.filter((m) => level === 'detailed' || m.level === 'essential');

/** The series one metric keeps for a fleet of `nodes`: one a node, or one for the fleet. */
const seriesOf = (m: MetricSpec, nodes: number): number => (m.scope === 'node' ? nodes : 1);

/** Custom metrics (name and dimension combinations) a setting keeps for a fleet of `nodes`. */
export const seriesAt = (level: MetricLevel, nodes: number): number =>
  publishedAt(level).reduce((n, m) => n + seriesOf(m, nodes), 0);

/** What one metric of the catalogue costs a month at list price for a fleet of `nodes`. */
export const metricUsd = (m: MetricSpec, nodes: number): number =>
  Math.round(seriesOf(m, nodes) * METRIC_USD_MONTH * 100) / 100;

/** What a setting costs a month at list price, in US dollars. */
export const monthlyUsd = (level: MetricLevel, nodes: number): number =>
  Math.round(publishedAt(level).reduce((usd, m) => usd + metricUsd(m, nodes), 0) * 100) / 100;
