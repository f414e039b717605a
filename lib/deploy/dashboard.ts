import { configSchema } from '../core/config';
import { METRIC_LEVELS, type MetricLevel } from '../core/metrics/catalogue';
import { dashboardPanels, type DimensionValue, type Panel } from '../core/metrics/panels';
import { parseWith } from '../core/validate';
import { z } from 'zod';
import { nodeNamesOf } from './node-roles';
import { lostAfterMs } from '../core/fleet/membership';

/**
 * The stack's CloudWatch dashboard, from the panels of lib/core/metrics/panels.ts: one widget a
 * panel, a line a node, names of the stack's own resources left to CloudFormation (Fn::Sub).
 * Loaded by resources/dashboard.cjs when the service is packaged.
 */
export interface DashboardInputs {
  service: string;
  stage: string;
  bucket: string;
  nodes: unknown;
  metrics: unknown;
  /** `false` (or "false") leaves the dashboard out: $3 a month at list price, free for an account's first three. */
  dashboard: unknown;
}

const DEFAULTS = configSchema.parse({});

/** How CloudFormation names each resource a dimension points at, inside Fn::Sub. */
const subValue = (v: DimensionValue, bucket: string): string => {
  switch (v.of) {
    case 'fleet':
      return bucket;
    case 'node':
      if (v.node === null) throw new Error('the CloudWatch dashboard names every node');
      return v.node;
    case 'queue':
      return {
        tasks: '${TaskQueue.QueueName}',
        intake: '${IntakeQueue.QueueName}',
        'dead-letter': '${DeadLetterQueue.QueueName}',
        'notifier-failures': '${NotifierFailureQueue.QueueName}',
      }[v.queue];
    case 'watchdog':
      return '${WatchdogLambdaFunction}';
  }
};

const widget = (p: Panel, i: number, bucket: string): unknown => ({
  type: 'metric',
  x: (i % 2) * 12,
  y: Math.floor(i / 2) * 6,
  width: 12,
  height: 6,
  properties: {
    title: p.title,
    view: 'timeSeries',
    region: '${AWS::Region}',
    period: 60,
    metrics: p.series.map((s) => [
      s.namespace,
      s.metric,
      ...Object.entries(s.dimensions).flatMap(([name, v]) => [name, subValue(v, bucket)]),
      { stat: s.stat, label: s.label },
    ]),
    ...(p.threshold === undefined
      ? {}
      : { annotations: { horizontal: [{ value: p.threshold.value, label: p.threshold.label }] } }),
  },
});

/** The dashboard's body as CloudWatch takes it (PutDashboard's DashboardBody): JSON text, with ${…} for Fn::Sub. */
export const dashboardBody = (level: MetricLevel, nodes: readonly string[], bucket: string): string => {
  const panels = dashboardPanels(level, nodes, {
    silenceSeconds: lostAfterMs(DEFAULTS) / 1000,
    stallSamples: DEFAULTS.stallSamples,
  });
  return JSON.stringify({ widgets: panels.map((p, i) => widget(p, i, bucket)) });
};

export const dashboardFragment = (inputs: DashboardInputs): { Resources: Record<string, unknown> } => {
  const level = parseWith(z.enum(METRIC_LEVELS), inputs.metrics, 'parameter metrics');
  const wanted = parseWith(
    z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]),
    inputs.dashboard,
    'parameter dashboard',
  );
  if (!wanted) return { Resources: {} };
  const nodes = nodeNamesOf({ nodes: inputs.nodes });
  return {
    Resources: {
      FleetDashboard: {
        Type: 'AWS::CloudWatch::Dashboard',
        Properties: {
          DashboardName: `${inputs.service}-${inputs.stage}`,
          DashboardBody: { 'Fn::Sub': dashboardBody(level, nodes, inputs.bucket) },
        },
      },
    },
  };
};
