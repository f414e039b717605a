/**
 * Request counts by what they are for, and the check that they did not regress. The local cloud
 * counts every request of the fleet (nodes and watchdog; not the drill's own setup) by kind and
 * purpose; a drill's report turns them into two figures, each per service as AWS bills it:
 * the control loop per scenario hour (lease, heartbeats, the watchdog's reads and state,
 * peer-sync, queue polls, watchdog runs) and the work per completed task (checkpoints, outputs,
 * completions, sends, deletes, visibility). Counts, not times: they do not depend on how busy
 * the machine running the drill is.
 */

/** What an S3 key or an SQS action is for. */
export type Purpose = 'lease' | 'heartbeat' | 'watchdog' | 'sync' | 'task' | 'incident' | 'poll' | 'send' | 'other';

const S3_PURPOSES: readonly [RegExp, Purpose][] = [
  [/(^|\/)leader\.json$/, 'lease'],
  [/(^|\/)nodes\/[^/]+\/(heartbeat\.json|beat)$/, 'heartbeat'],
  [/(^|\/)watchdog\/state\.json$/, 'watchdog'],
  [/(^|\/)(manifest\.json|manifest\/|archive\/)/, 'sync'],
  [/(^|\/)(tasks|outputs)\//, 'task'],
  [/(^|\/)(events|quarantine)\//, 'incident'],
];

/** The purpose of an S3 key (or of a LIST's prefix). */
export const purposeOfKey = (key: string): Purpose => S3_PURPOSES.find(([re]) => re.test(key))?.[1] ?? 'other';

/** SQS actions that move a task (billed per task) against those that poll or measure (per hour). */
const SQS_SEND = new Set([
  'SendMessage',
  'SendMessageBatch',
  'DeleteMessage',
  'DeleteMessageBatch',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
]);

/** The purpose of an SQS action (`ReceiveMessage`, `GetQueueAttributes`, …). */
export const purposeOfSqsAction = (action: string): Purpose => (SQS_SEND.has(action) ? 'send' : 'poll');

/**
 * Billed units of one figure: S3 GET (and HEAD), S3 PUT (and LIST), SQS requests, DynamoDB read and
 * write request units, watchdog runs.
 */
export interface RequestUnits {
  s3Get: number;
  s3Put: number;
  sqs: number;
  ddbRead: number;
  ddbWrite: number;
  lambda: number;
}

export interface RequestFigures {
  /** The control loop and peer-sync, per scenario hour. */
  perHour: RequestUnits;
  /** The work, per completed task. */
  perTask: RequestUnits;
  /** The raw counts, `<kind>:<purpose>` (`s3.PUT:lease`, `sqs:poll`), over the whole run. */
  counts: Record<string, number>;
}

const TASK_PURPOSES = new Set<Purpose>(['task', 'send']);
const UNITS: readonly (keyof RequestUnits)[] = ['s3Get', 's3Put', 'sqs', 'ddbRead', 'ddbWrite', 'lambda'];
/** A figure whose every unit is `f(unit)`. */
export const mapUnits = (f: (unit: keyof RequestUnits) => number): RequestUnits =>
  Object.fromEntries(UNITS.map((u) => [u, f(u)])) as unknown as RequestUnits;
const units = (): RequestUnits => mapUnits(() => 0);
const unitOf = (kind: string): keyof RequestUnits | null => {
  if (kind === 's3.GET' || kind === 's3.HEAD') return 's3Get';
  if (kind === 's3.PUT' || kind === 's3.LIST') return 's3Put';
  if (kind === 'sqs') return 'sqs';
  if (kind === 'dynamodb.RRU') return 'ddbRead';
  if (kind === 'dynamodb.WRU') return 'ddbWrite';
  return null;
};
const round = (n: number): number => Math.round(n * 10) / 10;

/**
 * The figures of a run: `counts` by `<kind>:<purpose>`, the run's length in scenario seconds,
 * the tasks it completed and its watchdog runs. A run that completed nothing has no per-task figure (zeros).
 */
export const requestFigures = (
  counts: Readonly<Record<string, number>>,
  seconds: number,
  tasks: number,
  watchdogRuns: number,
): RequestFigures => {
  const hourly = units();
  const work = units();
  for (const [label, n] of Object.entries(counts)) {
    const [kind = '', purpose = 'other'] = label.split(':');
    const unit = unitOf(kind);
    if (unit === null) continue;
    (TASK_PURPOSES.has(purpose as Purpose) ? work : hourly)[unit] += n;
  }
  hourly.lambda = watchdogRuns;
  const hours = seconds / 3600;
  const per = (u: RequestUnits, by: number): RequestUnits => mapUnits((unit) => round(by > 0 ? u[unit] / by : 0));
  return { perHour: per(hourly, hours), perTask: per(work, tasks), counts: { ...counts } };
};

/** A figure that grew past its allowance over the baseline. */
export interface Regression {
  figure: string;
  baseline: number;
  actual: number;
  /** actual / baseline. */
  ratio: number;
}

/**
 * Figures above `baseline × (1 + tolerance)`. A unit the baseline does not use (0) may not
 * start being used beyond `slack` requests a task or an hour: new traffic is a regression too.
 */
export const regressions = (
  actual: Pick<RequestFigures, 'perHour' | 'perTask'>,
  baseline: Pick<RequestFigures, 'perHour' | 'perTask'>,
  tolerance = 0.25,
  slack = 1,
): Regression[] => {
  const found: Regression[] = [];
  for (const scope of ['perHour', 'perTask'] as const) {
    for (const unit of Object.keys(baseline[scope]) as (keyof RequestUnits)[]) {
      const base = baseline[scope][unit];
      const now = actual[scope][unit];
      const allowed = base === 0 ? slack : base * (1 + tolerance);
      if (now > allowed)
        found.push({
          figure: `${scope}.${unit}`,
          baseline: base,
          actual: now,
          ratio: base === 0 ? Infinity : Math.round((now / base) * 100) / 100,
        });
    }
  }
  return found;
};
