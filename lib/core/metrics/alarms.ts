import type { AlarmAnchor } from '../runbook';
import { CATALOGUE, publishedAt, type MetricLevel, type MetricSpec } from './catalogue';

/**
 * The alarms on the watchdog's own metrics, beside the control-plane alarms of
 * resources/alarms.yml: no ready standby for a while, a stall left open, a node not heard from.
 * (Input held too long is the intake-age alarm, on SQS's own free metric.) Pure: the stack
 * (lib/deploy/metric-alarms.ts), the cost figures of docs/operations.md and the tests read this.
 *
 * Every period is 5 minutes: the watchdog publishes its gauges on its schedule and the nodes'
 * own triggers, and two scheduled runs can be almost two minutes apart (EventBridge runs a rate
 * rule "within that minute"), so a 1-minute period would have gaps that read as missing data.
 * No data at all is left to `…-watchdog-not-running`: these treat it as missing, not as trouble.
 */

/** CloudWatch's list price of one standard-resolution alarm on one metric, a month (us-west-2). */
export const ALARM_USD_MONTH = 0.1;

const PERIOD_SECONDS = 300;

export interface AlarmSettings {
  /** Minutes with no ready standby at all before `…-no-ready-standby` (rounded up to whole 5-minute periods). */
  standbyAlarmMinutes: number;
  /** Minutes a node's failing samples stay at or past the verdict before `…-stall-open-<node>`. */
  stallAlarmMinutes: number;
  /** Seconds without a new sample from a node, throughout a 5-minute period, before `…-heartbeat-<node>`. */
  heartbeatAlarmSeconds: number;
  /** The stall rule's verdict: failing samples in a row. */
  stallSamples: number;
}

export interface MetricAlarm {
  /** What it is called after `<service>-<stage>-`. */
  name: string;
  metric: MetricSpec['name'];
  /** The node of a per-node metric, or null for a fleet one. */
  node: string | null;
  statistic: 'Maximum' | 'Minimum';
  periodSeconds: number;
  evaluationPeriods: number;
  threshold: number;
  comparison: 'LessThanThreshold' | 'GreaterThanThreshold' | 'GreaterThanOrEqualToThreshold';
  description: string;
  /** The runbook's anchor for it, and the dashboard panel to look at. */
  runbook: AlarmAnchor;
  panel: string;
}

const periods = (minutes: number): number => Math.max(1, Math.ceil((minutes * 60) / PERIOD_SECONDS));

const metricOf = (name: string): MetricSpec => {
  const spec = CATALOGUE.find((m) => m.name === name);
  if (spec === undefined) throw new Error(`no metric ${name} in the catalogue`);
  return spec;
};

/** The alarms a metrics setting gets for these nodes: none when off (they would have nothing to read). */
export const metricAlarms = (level: MetricLevel, nodes: readonly string[], s: AlarmSettings): MetricAlarm[] => {
  const published = new Set(publishedAt(level).map((m) => m.name));
  const alarms: MetricAlarm[] = [];
  const add = (a: Omit<MetricAlarm, 'periodSeconds'>): void => {
    if (published.has(metricOf(a.metric).name)) alarms.push({ ...a, periodSeconds: PERIOD_SECONDS });
  };
  const standby = periods(s.standbyAlarmMinutes);
  add({
    name: 'no-ready-standby',
    metric: 'ReadyStandbys',
    node: null,
    // The best of each period still 0: not one run in it found a standby that could take over.
    statistic: 'Maximum',
    evaluationPeriods: standby,
    threshold: 1,
    comparison: 'LessThanThreshold',
    description:
      `No ready standby for ${(standby * PERIOD_SECONDS) / 60} minutes: a failure of the primary has ` +
      `nowhere to go.`,
    runbook: 'NoReadyStandby',
    panel: 'Ready standbys',
  });
  for (const node of nodes) {
    const stall = periods(s.stallAlarmMinutes);
    add({
      name: `stall-open-${node}`,
      metric: 'FailingSamples',
      node,
      // The fewest of each period still at the verdict: neither a restart nor a failover ended it.
      statistic: 'Minimum',
      evaluationPeriods: stall,
      threshold: s.stallSamples,
      comparison: 'GreaterThanOrEqualToThreshold',
      description:
        `${node} has been judged stalled (${s.stallSamples} failing samples in a row) ` +
        `for ${(stall * PERIOD_SECONDS) / 60} minutes: the restart and failover ladder did not end it.`,
      runbook: 'StallOpen',
      panel: 'Failing samples',
    });
    add({
      name: `heartbeat-${node}`,
      metric: 'HeartbeatAge',
      node,
      // The freshest of the period still too old: no new sample from the node in all of it.
      statistic: 'Minimum',
      evaluationPeriods: 1,
      threshold: s.heartbeatAlarmSeconds,
      comparison: 'GreaterThanThreshold',
      description:
        `No new sample from ${node} for more than ${s.heartbeatAlarmSeconds} s, by the watchdog's clock, ` +
        `throughout 5 minutes: the node, its agent or its network is down.`,
      runbook: 'HeartbeatOld',
      panel: 'Heartbeat age',
    });
  }
  return alarms;
};

/** What a setting's alarms cost a month at list price, in US dollars. */
export const alarmsMonthlyUsd = (level: MetricLevel, nodes: number, s: AlarmSettings): number =>
  Math.round(
    metricAlarms(
      level,
      Array.from({ length: nodes }, (_, i) => `node-${i + 1}`),
      s,
    ).length *
      ALARM_USD_MONTH *
      100,
  ) / 100;
