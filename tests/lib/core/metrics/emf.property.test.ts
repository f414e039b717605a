import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import {
  CATALOGUE,
  METRIC_LEVELS,
  METRICS_NAMESPACE,
  metricUsd,
  monthlyUsd,
  publishedAt,
  seriesAt,
} from '../../../../lib/core/metrics/catalogue';
import { emfDocuments, readEmf } from '../../../../lib/core/metrics/emf';

/**
 * The Embedded Metric Format document as the specification words it (CloudWatch User Guide,
 * "Specification: Embedded metric format"): a root `_aws` with a millisecond Timestamp and
 * CloudWatchMetrics directives; each directive a Namespace, Dimensions (sets of at most 30
 * members of the root, each a string) and Metrics (at most 100, each naming a root member that
 * is a number, with a CloudWatch unit).
 */
const UNITS = [
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Count/Second',
  'None',
] as const;
const directive = z.strictObject({
  Namespace: z.string().min(1).max(1024),
  Dimensions: z.array(z.array(z.string().min(1).max(250)).max(30)),
  Metrics: z
    .array(z.strictObject({ Name: z.string().min(1).max(1024), Unit: z.enum(UNITS) }))
    .min(1)
    .max(100),
});
const emfSchema = z.looseObject({
  _aws: z.strictObject({ Timestamp: z.number().int().min(0), CloudWatchMetrics: z.array(directive).min(1) }),
});

const name = fc.constantFrom('node-1', 'node-2', 'node-3', 'edge-a');
const metricNames = CATALOGUE.map((m) => m.name).concat(['TaskId', 'Unknown']);
// JSON has no -0 (JSON.stringify(-0) is "0", and CloudWatch reads a number): a -0 would read back as 0,
// which is the same value, not a defect; a full run of the suite drew one (seed 1949839479).
const valuesArb = fc.dictionary(
  fc.constantFrom(...metricNames),
  fc.oneof(
    fc.double({ noNaN: true, min: -1e9, max: 1e9 }).map((v) => (Object.is(v, -0) ? 0 : v)),
    fc.integer({ min: 0, max: 1e6 }),
  ),
  { maxKeys: 14 },
);

describe('Embedded Metric Format documents', () => {
  it(
    "follow the specification, carry only the catalogue's metrics " +
      'of the level in their own scope, and read back as written',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...METRIC_LEVELS),
          valuesArb,
          fc.dictionary(name, valuesArb, { maxKeys: 4 }),
          fc.integer({ min: 0, max: 2 ** 45 }),
          (level, fleet, nodes, at) => {
            const docs = emfDocuments(level, 'acme-bucket', at, { fleet, nodes });
            const allowed = new Map(publishedAt(level).map((m) => [m.name, m]));
            for (const doc of docs) {
              expect(emfSchema.safeParse(doc).success).toBe(true);
              const [d] = doc._aws.CloudWatchMetrics;
              expect(d?.Namespace).toBe(METRICS_NAMESPACE);
              for (const set of d?.Dimensions ?? []) for (const dim of set) expect(typeof doc[dim]).toBe('string');
              for (const m of d?.Metrics ?? []) {
                expect(typeof doc[m.Name]).toBe('number');
                const spec = allowed.get(m.Name);
                expect(spec?.unit).toBe(m.Unit);
                expect(d?.Dimensions).toEqual([spec?.scope === 'node' ? ['Fleet', 'Node'] : ['Fleet']]);
              }
            }
            const read = docs.flatMap((doc) => readEmf(JSON.stringify(doc)) ?? []);
            const expected = [
              ...Object.entries(fleet)
                .filter(([n]) => allowed.get(n)?.scope === 'fleet')
                .map(([n, v]) => ({ name: n, node: null, value: v })),
              ...Object.entries(nodes).flatMap(([node, vs]) =>
                Object.entries(vs)
                  .filter(([n]) => allowed.get(n)?.scope === 'node')
                  .map(([n, v]) => ({ name: n, node, value: v })),
              ),
            ];
            const key = (v: { name: string; node: string | null }): string => `${v.node ?? ''}/${v.name}`;
            expect(
              read
                .map((v) => ({ name: v.name, node: v.node, value: v.value }))
                .sort((a, b) => key(a).localeCompare(key(b))),
            ).toEqual(expected.sort((a, b) => key(a).localeCompare(key(b))));
          },
        ),
      );
    },
  );

  it('reads an ordinary log line as no document', () => {
    for (const line of ['', 'not json', '{"level":30,"msg":"x"}', '[1,2]', '{"_aws":{}}'])
      expect(readEmf(line) ?? []).toEqual([]);
  });
});

describe('the metric catalogue', () => {
  it('names each metric once, and dimensions them by node at most: no task id, no epoch', () => {
    expect(new Set(CATALOGUE.map((m) => m.name)).size).toBe(CATALOGUE.length);
    for (const m of CATALOGUE) expect(['node', 'fleet']).toContain(m.scope);
  });

  it('keeps `essential` at most $2.10 a month for 2 nodes, and prices each level by its series', () => {
    expect(monthlyUsd('essential', 2)).toBeLessThanOrEqual(2.1);
    expect(seriesAt('off', 3)).toBe(0);
    expect(monthlyUsd('detailed', 3)).toBe(Math.round(seriesAt('detailed', 3) * 30) / 100);
    expect(seriesAt('detailed', 2)).toBeGreaterThan(seriesAt('essential', 2));
  });

  it("is the table docs/operations.md gives, with each metric's and each level's cost for 2 and 3 nodes", () => {
    const page = readFileSync(join(__dirname, '../../../../docs/operations.md'), 'utf8');
    for (const m of CATALOGUE)
      expect(page).toContain(
        `| \`${m.name}\` | ${m.scope === 'node' ? 'Fleet, Node' : 'Fleet'} | ${m.unit} | ${m.statistic} ` +
          `| ${m.level} | $${metricUsd(m, 2).toFixed(2)} / $${metricUsd(m, 3).toFixed(2)} | ${m.meaning} |`,
      );
    // Each level is the sum of its metrics.
    for (const level of ['essential', 'detailed'] as const)
      expect(publishedAt(level).reduce((sum, m) => sum + metricUsd(m, 2), 0)).toBeCloseTo(monthlyUsd(level, 2), 2);
    for (const level of ['essential', 'detailed'] as const)
      expect(page).toContain(
        `| \`${level}\` | ${seriesAt(level, 2)} | $${monthlyUsd(level, 2).toFixed(2)} ` +
          `| ${seriesAt(level, 3)} | $${monthlyUsd(level, 3).toFixed(2)} |`,
      );
  });
});
