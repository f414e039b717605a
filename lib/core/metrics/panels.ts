import { CATALOGUE, METRICS_NAMESPACE, publishedAt, type MetricLevel, type MetricSpec } from './catalogue';

/**
 * The fleet's dashboard as data, rendered both as the stack's CloudWatch dashboard
 * (lib/deploy/dashboard.ts) and as the Grafana dashboard in dashboards/: the same panels, each
 * from the catalogue's metrics at the fleet's level, and from what AWS publishes for free (SQS's
 * queue depths and ages, the watchdog function's runs and errors).
 */

/** A dimension's value, resolved by each renderer: the fleet (its bucket), a node, a queue, the watchdog function. */
/** The stack's queues a panel reads SQS's own metrics of. */
export type QueueKind = 'tasks' | 'intake' | 'dead-letter' | 'notifier-failures';
export type DimensionValue =
  { of: 'fleet' } | { of: 'node'; node: string | null } | { of: 'queue'; queue: QueueKind } | { of: 'watchdog' };

export interface PanelSeries {
  namespace: string;
  metric: string;
  dimensions: Record<string, DimensionValue>;
  stat: 'Maximum' | 'Minimum' | 'Average' | 'Sum';
  label: string;
}

export interface Panel {
  title: string;
  /** What to look at in it, and which alert or alarm sends an operator here (docs/runbook.md). */
  description: string;
  unit: string;
  series: PanelSeries[];
  /** A line to read against: the level where the fleet acts. */
  threshold?: { value: number; label: string };
}

const spec = (name: string): MetricSpec => {
  const found = CATALOGUE.find((m) => m.name === name);
  if (found === undefined) throw new Error(`${name} is not in the metric catalogue`);
  return found;
};

/** One series per node (null: every node, for a renderer that lists them itself) or the fleet's one. */
const fleetSeries = (name: string, nodes: readonly (string | null)[]): PanelSeries[] => {
  const m = spec(name);
  if (m.scope === 'fleet')
    return [
      {
        namespace: METRICS_NAMESPACE,
        metric: name,
        dimensions: { Fleet: { of: 'fleet' } },
        stat: m.statistic,
        label: name,
      },
    ];
  return nodes.map((node) => ({
    namespace: METRICS_NAMESPACE,
    metric: name,
    dimensions: { Fleet: { of: 'fleet' }, Node: { of: 'node', node } },
    stat: m.statistic,
    label: node === null ? `${name} {{Node}}` : `${name} ${node}`,
  }));
};

const sqs = (metric: string, queue: QueueKind, stat: PanelSeries['stat'], label: string): PanelSeries => ({
  namespace: 'AWS/SQS',
  metric,
  dimensions: { QueueName: { of: 'queue', queue } },
  stat,
  label,
});
const lambda = (metric: string, stat: PanelSeries['stat']): PanelSeries => ({
  namespace: 'AWS/Lambda',
  metric,
  dimensions: { FunctionName: { of: 'watchdog' } },
  stat,
  label: `watchdog ${metric}`,
});

/**
 * The panels at a metrics level for these nodes, in reading order. A panel whose catalogue
 * metrics the level does not publish is left out, unless AWS's own metrics fill it.
 */
export const dashboardPanels = (
  level: MetricLevel,
  nodes: readonly (string | null)[],
  settings: { silenceSeconds: number; stallSamples: number },
): Panel[] => {
  const on = new Set(publishedAt(level).map((m) => m.name));
  const ours = (...names: string[]): PanelSeries[] =>
    names.filter((n) => on.has(n)).flatMap((n) => fleetSeries(n, nodes));
  const panels: Panel[] = [
    {
      title: 'Heartbeat age',
      description:
        "Seconds since each node's lease (the primary) or newest sample (the others) last changed, by the " +
        "watchdog's clock. Past the line a node is lost: NODE_SILENT, NODE_DEAD, REDUNDANCY_LOST (AGENT_DEAD in " +
        'earlier versions), and RECOVERED once it is heard again; the HeartbeatOld alarm.',
      unit: 'Seconds',
      series: ours('HeartbeatAge'),
      threshold: { value: settings.silenceSeconds, label: 'silent' },
    },
    {
      title: 'Failing samples',
      description:
        'Failing samples in a row by the stall rule. At the line the watchdog judges a stall: STALLED, ' +
        'RESTART_SENT, RESTART_RESULT, RESTART_FAILED, RESTART_BUDGET_EXHAUSTED, STILL_STALLED, FAILOVER_STARTED; ' +
        'the StallOpen alarm.',
      unit: 'Count',
      series: ours('FailingSamples'),
      threshold: { value: settings.stallSamples, label: 'stall' },
    },
    {
      title: 'Roles',
      description:
        'The lease epoch (each step is a change of primary) and which node holds it: OLD_PRIMARY_STOPPED, PROMOTED, ' +
        'RECORD_CHANGED, FAILOVER_FAILED, LEADER_DAMAGED.',
      unit: 'None',
      series: ours('Epoch', 'Primary'),
    },
    {
      title: 'Ready standbys',
      description:
        'Standbys that could take over now (a cordoned one never can). At 0 a failure of the primary has nowhere to ' +
        'go: NO_STANDBY, STANDBY_UNREADY, REJOIN_FAILED; the NoReadyStandby alarm. Paused at 1: fleet pause holds ' +
        'every restart and failover.',
      unit: 'Count',
      series: ours('ReadyStandbys', 'Paused'),
      threshold: { value: 1, label: 'redundant' },
    },
    {
      title: 'Backlog',
      description:
        "The task queue's depth (visible and in flight) and the intake queue's, from SQS's own metrics (never a " +
        "node's clock), and whether input is held: INPUT_HELD, INPUT_RESUMED, INPUT_WAITING, OUTAGE.",
      unit: 'Count',
      series: [
        sqs('ApproximateNumberOfMessagesVisible', 'tasks', 'Maximum', 'tasks visible'),
        sqs('ApproximateNumberOfMessagesNotVisible', 'tasks', 'Maximum', 'tasks in flight'),
        sqs('ApproximateNumberOfMessagesVisible', 'intake', 'Maximum', 'intake visible'),
        ...ours('InputHeld'),
      ],
    },
    {
      title: 'Oldest message',
      description:
        'How long the oldest message of each queue has waited (seconds), and what waits in the dead-letter queue ' +
        "and the notifier's failure queue: INPUT_WAITING, DEAD_LETTERED, POISON_TASK, NOTIFIER_FAILED.",
      unit: 'Seconds',
      series: [
        sqs('ApproximateAgeOfOldestMessage', 'tasks', 'Maximum', 'tasks'),
        sqs('ApproximateAgeOfOldestMessage', 'intake', 'Maximum', 'intake'),
        sqs('ApproximateNumberOfMessagesVisible', 'dead-letter', 'Maximum', 'dead-lettered'),
        sqs('ApproximateNumberOfMessagesVisible', 'notifier-failures', 'Maximum', 'alerts Slack missed'),
      ],
    },
    {
      title: 'Work',
      description: 'Tasks each node is running and completed in its completion window, by its newest sample.',
      unit: 'Count',
      series: ours('InFlight', 'Completions'),
    },
    {
      title: 'Worker resources',
      description: "Each worker's CPU and resident memory, by its node's newest sample.",
      unit: 'Percent',
      series: ours('WorkerCpu', 'WorkerMemory'),
    },
    {
      title: 'Agents',
      description:
        "Each agent's last peer-sync round (seconds), the CAS races it lost in its completion window, and the lease " +
        'the primary had left (seconds, by its own clock) at its newest sample. A lease near 0 comes before a ' +
        'fence: LEADER_DAMAGED, a slow or throttled table; races that keep climbing (beyond the one a failover ' +
        'costs) are nodes fighting over the manifest or the lease.',
      unit: 'Seconds',
      series: ours('PeerSyncSeconds', 'LeaseSecondsLeft', 'CasConflicts'),
    },
    {
      title: 'Incidents',
      description: 'Incidents opened, restarts and failovers the watchdog claimed, per period.',
      unit: 'Count',
      series: ours('IncidentsOpened', 'Restarts', 'Failovers'),
    },
    {
      title: 'Watchdog',
      description:
        "The watchdog function's runs and errors (Lambda's own metrics): the WatchdogErrors and WatchdogNotRunning " +
        'alarms, STATE_DAMAGED, MANIFEST_DAMAGED.',
      unit: 'Count',
      series: [lambda('Invocations', 'Sum'), lambda('Errors', 'Sum'), lambda('Duration', 'Maximum')],
    },
  ];
  return panels.filter((p) => p.series.length > 0);
};
