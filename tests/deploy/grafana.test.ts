import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { EVENT_KINDS } from '../../lib/core/events';
import { CATALOGUE, METRICS_NAMESPACE } from '../../lib/core/metrics/catalogue';
import { dashboardPanels } from '../../lib/core/metrics/panels';
import { DATASOURCE_UID, dashboardFiles } from '../../lib/deploy/grafana';

const DIR = join(__dirname, '../../dashboards');
const read = (path: string): string => readFileSync(join(DIR, path), 'utf8');
/** The provisioning files are YAML written as JSON after a comment line. */
const yamlAsJson = (text: string): unknown =>
  JSON.parse(
    text
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n'),
  );

/**
 * Grafana's dashboard model, as much of it as a provisioned dashboard needs (Grafana docs,
 * "JSON model"): panels on a 24-column grid, each a time series of CloudWatch targets naming a
 * namespace, a metric, its dimensions, a statistic and a period (the CloudWatch data source's
 * query model).
 */
const STATISTICS = ['Average', 'Maximum', 'Minimum', 'Sum', 'SampleCount'] as const;
const target = z.looseObject({
  refId: z.string().regex(/^[A-Z]$/),
  datasource: z.looseObject({ type: z.literal('cloudwatch'), uid: z.string() }),
  queryMode: z.literal('Metrics'),
  region: z.string().min(1),
  namespace: z.string().min(1),
  metricName: z.string().min(1),
  dimensions: z.record(z.string(), z.string().min(1)),
  matchExact: z.boolean(),
  statistic: z.enum(STATISTICS),
  period: z.string().regex(/^\d+$/),
});
const panel = z.looseObject({
  id: z.number().int().positive(),
  type: z.literal('timeseries'),
  title: z.string().min(1),
  description: z.string().min(1),
  gridPos: z.strictObject({
    x: z.number().int().min(0).max(23),
    y: z.number().int().min(0),
    w: z.number().int().min(1).max(24),
    h: z.number().int().min(1),
  }),
  datasource: z.looseObject({ type: z.literal('cloudwatch') }),
  fieldConfig: z.looseObject({ defaults: z.looseObject({ unit: z.string() }), overrides: z.array(z.unknown()) }),
  targets: z.array(target).min(1),
});
const dashboardModel = z.looseObject({
  uid: z.string().min(1).max(40),
  title: z.string().min(1),
  schemaVersion: z.number().int().min(36),
  templating: z.looseObject({ list: z.array(z.looseObject({ name: z.string(), type: z.string() })) }),
  panels: z.array(panel).min(1),
});
type Dashboard = z.output<typeof dashboardModel>;

const AWS_METRICS: Record<string, string[]> = {
  'AWS/SQS': [
    'ApproximateNumberOfMessagesVisible',
    'ApproximateNumberOfMessagesNotVisible',
    'ApproximateAgeOfOldestMessage',
  ],
  'AWS/Lambda': ['Invocations', 'Errors', 'Duration'],
};

describe('dashboards/ (Grafana)', () => {
  const dashboard: Dashboard = dashboardModel.parse(JSON.parse(read('queens-fleet.json')));

  it('holds what `npm run dashboards` makes from the catalogue: nothing edited by hand, nothing stale', () => {
    for (const [path, text] of Object.entries(dashboardFiles())) expect(read(path)).toBe(text);
  });

  it(
    'has the shape of a Grafana dashboard: panels on the grid without overlap, ' +
      'unique ids, targets with a namespace, metric, dimensions, statistic and period',
    () => {
      expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
      const cells = new Set<string>();
      for (const p of dashboard.panels) {
        expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
        for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
          for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
            expect(cells.has(`${x},${y}`)).toBe(false);
            cells.add(`${x},${y}`);
          }
        expect(new Set(p.targets.map((t) => t.refId)).size).toBe(p.targets.length);
      }
    },
  );

  it(
    "charts only metrics that exist: the catalogue's, " + 'by their dimensions and statistic, or the AWS ones it names',
    () => {
      const variables = new Set(dashboard.templating.list.map((v) => v.name));
      for (const t of dashboard.panels.flatMap((p) => p.targets)) {
        for (const value of Object.values(t.dimensions))
          if (value.startsWith('$')) expect(variables).toContain(value.slice(1));
        if (t.namespace === METRICS_NAMESPACE) {
          const spec = CATALOGUE.find((m) => m.name === t.metricName);
          expect(spec).toBeDefined();
          expect(Object.keys(t.dimensions).sort()).toEqual(spec?.scope === 'node' ? ['Fleet', 'Node'] : ['Fleet']);
          expect(t.statistic).toBe(spec?.statistic);
        } else {
          expect(AWS_METRICS[t.namespace]).toContain(t.metricName);
        }
      }
      // Every metric of the catalogue is on a panel.
      const charted = new Set(
        dashboard.panels.flatMap((p) =>
          p.targets.filter((t) => t.namespace === METRICS_NAMESPACE).map((t) => t.metricName),
        ),
      );
      expect([...charted].sort()).toEqual(CATALOGUE.map((m) => m.name).sort());
    },
  );

  it(
    'provisions a CloudWatch data source with no key in it, ' +
      "the one the dashboard uses, and the dashboard's folder",
    () => {
      const source = z
        .strictObject({
          apiVersion: z.literal(1),
          datasources: z
            .array(
              z.looseObject({
                name: z.string(),
                type: z.literal('cloudwatch'),
                uid: z.string(),
                jsonData: z.looseObject({ authType: z.string(), defaultRegion: z.string() }),
              }),
            )
            .length(1),
        })
        .parse(yamlAsJson(read('provisioning/datasources/cloudwatch.yaml')));
      expect(source.datasources[0]?.uid).toBe(DATASOURCE_UID);
      expect(JSON.stringify(source)).not.toMatch(/secret|accessKey|password/i);
      const variable = dashboard.templating.list.find((v) => v.name === 'datasource') as
        { current?: { value?: string } } | undefined;
      expect(variable?.current?.value).toBe(DATASOURCE_UID);
      const provider = z
        .strictObject({
          apiVersion: z.literal(1),
          providers: z
            .array(z.looseObject({ type: z.literal('file'), options: z.looseObject({ path: z.string().min(1) }) }))
            .length(1),
        })
        .parse(yamlAsJson(read('provisioning/dashboards/queens-fleet.yaml')));
      expect(provider.providers[0]?.options.path).toMatch(/^\//);
    },
  );

  it('names every alert on the panel that shows it coming, and the runbook lists the panels as they are', () => {
    const panels = dashboardPanels('detailed', [null], { silenceSeconds: 30, stallSamples: 8 });
    const named = panels.map((p) => p.description).join(' ');
    expect(EVENT_KINDS.filter((kind) => !new RegExp(`\\b${kind}\\b`).test(named))).toEqual([]);
    const runbook = readFileSync(join(__dirname, '../../docs/runbook.md'), 'utf8');
    for (const p of panels) expect(runbook).toContain(`- **${p.title}**: ${p.description}`);
  });
});
