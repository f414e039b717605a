import { CATALOGUE, METRICS_NAMESPACE, publishedAt, type MetricLevel } from './catalogue';

/**
 * CloudWatch Embedded Metric Format: a log line that CloudWatch Logs turns into metric values
 * ("Specification: Embedded metric format", CloudWatch User Guide). Lambda sends what a function
 * writes to standard output to its log group, so the watchdog publishes without a request of its
 * own. One document per dimension set: the fleet's metrics, then each node's.
 */
export interface EmfDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [member: string]: unknown;
}

/** Values of one run: the fleet's, and each node's by name. A metric left out has no value this run. */
export interface MetricValues {
  fleet: Readonly<Record<string, number>>;
  nodes: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

const UNITS = new Map(CATALOGUE.map((m) => [m.name, m.unit]));

const document = (
  at: number,
  dimensions: Record<string, string>,
  values: Readonly<Record<string, number>>,
  allowed: ReadonlySet<string>,
): EmfDocument | null => {
  const names = Object.keys(values).filter((n) => allowed.has(n) && Number.isFinite(values[n]));
  if (names.length === 0) return null;
  return {
    _aws: {
      Timestamp: at,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [Object.keys(dimensions)],
          Metrics: names.map((n) => ({ Name: n, Unit: UNITS.get(n) ?? 'None' })),
        },
      ],
    },
    ...dimensions,
    ...Object.fromEntries(names.map((n) => [n, values[n]])),
  };
};

/**
 * The documents for one run's values at a setting: only the catalogue's metrics of that level,
 * each in the scope the catalogue gives it (a node metric never published without its node).
 */
export const emfDocuments = (level: MetricLevel, fleet: string, at: number, values: MetricValues): EmfDocument[] => {
  const published = publishedAt(level);
  const fleetNames = new Set(published.filter((m) => m.scope === 'fleet').map((m) => m.name));
  const nodeNames = new Set(published.filter((m) => m.scope === 'node').map((m) => m.name));
  const docs = [document(at, { Fleet: fleet }, values.fleet, fleetNames)];
  for (const [node, v] of Object.entries(values.nodes))
    docs.push(document(at, { Fleet: fleet, Node: node }, v, nodeNames));
  return docs.filter((d): d is EmfDocument => d !== null);
};

/** One metric value read back from a document. */
export interface EmfValue {
  name: string;
  unit: string;
  node: string | null;
  value: number;
}

/**
 * The values of an Embedded Metric Format line as CloudWatch would extract them: each metric a
 * directive names whose member is a number, with the document's Node, if any. Null for a line
 * that is not such a document (an ordinary log line).
 */
export const readEmf = (line: string): EmfValue[] | null => {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || !('_aws' in doc)) return null;
  const d = doc as Partial<EmfDocument> & Record<string, unknown>;
  const directives = d._aws?.CloudWatchMetrics;
  if (!Array.isArray(directives)) return null;
  const node = typeof d.Node === 'string' ? d.Node : null;
  return directives.flatMap((directive) =>
    directive.Metrics.flatMap((m) => {
      const value = d[m.Name];
      return typeof value === 'number' ? [{ name: m.Name, unit: m.Unit, node, value }] : [];
    }),
  );
};
