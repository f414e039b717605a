import { z } from 'zod';
import { configSchema } from '../core/config';
import { metricAlarms, type AlarmSettings } from '../core/metrics/alarms';
import { METRIC_LEVELS, METRICS_NAMESPACE } from '../core/metrics/catalogue';
import { runbookLink } from '../core/runbook';
import { parseWith } from '../core/validate';
import { idPart, nodeNamesOf } from './node-roles';

/**
 * The stack's alarms on the watchdog's metrics (lib/core/metrics/alarms.ts), sent to the alert
 * topic like the control-plane alarms of resources/alarms.yml. Loaded by
 * resources/metric-alarms.cjs when the service is packaged; `metrics: off` leaves them out.
 */
export interface MetricAlarmInputs {
  service: string;
  stage: string;
  bucket: string;
  nodes: unknown;
  metrics: unknown;
  standbyAlarmMinutes: unknown;
  stallAlarmMinutes: unknown;
  heartbeatAlarmSeconds: unknown;
  runbookUrl: unknown;
}

const DEFAULTS = configSchema.parse({});
const positive = z.coerce
  .number()
  .positive()
  .max(1440 * 60);

export const metricAlarmsFragment = (inputs: MetricAlarmInputs): { Resources: Record<string, unknown> } => {
  const level = parseWith(z.enum(METRIC_LEVELS), inputs.metrics, 'parameter metrics');
  const settings: AlarmSettings = {
    standbyAlarmMinutes: parseWith(positive.max(1440), inputs.standbyAlarmMinutes, 'parameter standbyAlarmMinutes'),
    stallAlarmMinutes: parseWith(positive.max(1440), inputs.stallAlarmMinutes, 'parameter stallAlarmMinutes'),
    heartbeatAlarmSeconds: parseWith(positive, inputs.heartbeatAlarmSeconds, 'parameter heartbeatAlarmSeconds'),
    stallSamples: DEFAULTS.stallSamples,
  };
  const runbookUrl = parseWith(configSchema.shape.runbookUrl, inputs.runbookUrl, 'parameter runbookUrl');
  const nodes = nodeNamesOf({ nodes: inputs.nodes });
  const Resources: Record<string, unknown> = {};
  for (const a of metricAlarms(level, nodes, settings)) {
    const runbook = runbookLink(runbookUrl, a.runbook);
    Resources[`MetricAlarm${idPart(a.name)}`] = {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        AlarmName: `${inputs.service}-${inputs.stage}-${a.name}`,
        // The link last: no mail client takes a trailing full stop for part of it.
        AlarmDescription: `${a.description} Dashboard panel "${a.panel}". Runbook: ${runbook}`,
        Namespace: METRICS_NAMESPACE,
        MetricName: a.metric,
        Dimensions: [
          { Name: 'Fleet', Value: inputs.bucket },
          ...(a.node === null ? [] : [{ Name: 'Node', Value: a.node }]),
        ],
        Statistic: a.statistic,
        Period: a.periodSeconds,
        EvaluationPeriods: a.evaluationPeriods,
        Threshold: a.threshold,
        ComparisonOperator: a.comparison,
        TreatMissingData: 'missing',
        AlarmActions: [{ Ref: 'AlertTopic' }],
        OKActions: [{ Ref: 'AlertTopic' }],
      },
    };
  }
  return { Resources };
};
