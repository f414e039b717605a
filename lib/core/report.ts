import type { Expectations, Range, Scenario } from './scenario';

/** One line of a drill's timeline, in scenario seconds. */
export interface TimelineEntry {
  t: number;
  node: string;
  event: string;
  detail: string;
}

/** What the drill saw on the wire and from the fleet, in scenario seconds. */
export interface Observations {
  faults: { at: number; kind: string; node: string }[];
  /** Incident steps written by the watchdog (events/ objects). */
  events: { t: number; kind: string; node: string; incidentId: string }[];
  /** Worker restarts the watchdog issued through SSM (t = when the command was sent). */
  restarts: { t: number; node: string; finishedAt: number | null; ok: boolean | null }[];
  /** Worker starts by the node's supervisor after a crash (not watchdog restarts). */
  supervisorRestarts: { t: number; node: string }[];
  /** Every successful write of leader.json. */
  leaders: { t: number; epoch: number; primary: string }[];
  /** ReceiveMessage calls that handed out messages, with the epoch the consumer claimed. */
  receives: { t: number; node: string; count: number; epoch: number | null }[];
  /** Every change of the origin record, and each node's address in it. */
  dnsChanges: { t: number; value: string }[];
  addresses: Readonly<Record<string, string>>;
  /** Successful creations of done.json, per task id. */
  completions: ReadonlyMap<string, number>;
  enqueued: readonly string[];
  /** Messages in the dead-letter queue at the end (poison tasks). */
  deadLettered: number;
  timeline: TimelineEntry[];
  aws: Report['aws'];
  lambdaInvocations: number;
}

export interface Incident {
  node: string;
  fault: string;
  faultAt: number;
  detectedAt: number | null;
  restartedAt: number | null;
  recoveredAt: number | null;
  failoverAt: number | null;
  newPrimary: string | null;
  trafficAt: number | null;
}

export interface Report {
  scenario: string;
  seed: number;
  timeScale: number;
  wallSeconds: number;
  ok: boolean;
  expectations: { name: string; expected: unknown; actual: number | null; ok: boolean }[];
  incidents: Incident[];
  tasks: { enqueued: number; completed: number; lost: number; duplicateCompletions: number; deadLettered: number };
  epochs: { epoch: number; primary: string; from: number; to: number | null }[];
  invariants: { singlePrimaryPerEpoch: boolean; noLostTasks: boolean; noDuplicateCompletions: boolean; noFalseFailovers: boolean };
  timeline: TimelineEntry[];
  aws: { s3: { GET: number; PUT: number; LIST: number; HEAD: number }; sqs: number; sns: number; ssm: number; lambdaInvocations: number };
}

const round = (t: number | null): number | null => (t === null ? null : Math.round(t * 10) / 10);
const firstAfter = <T extends { t: number }>(items: readonly T[], from: number, pred: (x: T) => boolean): T | undefined =>
  items.find((x) => x.t >= from && pred(x));

/** Faults the watchdog is expected to detect, and the event that says it did. */
const DETECTION: Readonly<Record<string, string>> = {
  'stall-worker': 'STALLED',
  'kill-node': 'NODE_DEAD',
  'partition-node': 'NODE_DEAD',
  'kill-agent': 'AGENT_DEAD',
};

/** Faults on a node that justify moving the primary role away from it. */
const JUSTIFIES_FAILOVER = new Set(['stall-worker', 'kill-node', 'partition-node', 'kill-agent']);

const buildIncidents = (o: Observations, epochs: Report['epochs']): Incident[] =>
  o.faults.map((f) => {
    const detectKind = DETECTION[f.kind];
    const detected = detectKind === undefined ? undefined : firstAfter(o.events, f.at, (e) => e.node === f.node && e.kind === detectKind);
    const from = detected?.t ?? f.at;
    const restarted =
      f.kind === 'crash-worker'
        ? firstAfter(o.supervisorRestarts, f.at, (r) => r.node === f.node)?.t
        : detected === undefined
          ? undefined
          : (o.restarts.find((r) => r.t >= from && r.node === f.node && r.ok === true)?.finishedAt ?? undefined);
    const recovered = detected === undefined ? undefined : firstAfter(o.events, detected.t, (e) => e.node === f.node && e.kind === 'RECOVERED');
    // The first change of primary away from the faulted node after the fault.
    const failover = JUSTIFIES_FAILOVER.has(f.kind) ? epochs.find((e, i) => i > 0 && e.from >= f.at && epochs[i - 1]?.primary === f.node && e.primary !== f.node) : undefined;
    const address = failover === undefined ? undefined : o.addresses[failover.primary];
    const traffic = failover === undefined ? undefined : o.dnsChanges.find((d) => d.t >= f.at && d.value === address);
    return {
      node: f.node,
      fault: f.kind,
      faultAt: round(f.at) ?? 0,
      detectedAt: round(detected?.t ?? null),
      restartedAt: round(restarted ?? null),
      recoveredAt: round(recovered?.t ?? null),
      failoverAt: round(failover?.from ?? null),
      newPrimary: failover?.primary ?? null,
      trafficAt: round(traffic?.t ?? null),
    };
  });

const epochsOf = (o: Observations): Report['epochs'] => {
  const byEpoch = new Map<number, { epoch: number; primary: string; from: number }>();
  for (const l of o.leaders) if (!byEpoch.has(l.epoch)) byEpoch.set(l.epoch, { epoch: l.epoch, primary: l.primary, from: l.t });
  const list = [...byEpoch.values()].sort((a, b) => a.epoch - b.epoch);
  return list.map((e, i) => ({ ...e, from: round(e.from) ?? 0, to: round(list[i + 1]?.from ?? null) }));
};

/**
 * One consumer per epoch, and never two at once: every receive names its epoch, only that
 * epoch's primary receives in it, and receives never go back to an older epoch.
 */
const singlePrimary = (o: Observations, epochs: Report['epochs']): boolean => {
  const primaryOf = new Map(epochs.map((e) => [e.epoch, e.primary]));
  let newest = 0;
  for (const r of [...o.receives].sort((a, b) => a.t - b.t)) {
    if (r.epoch === null || primaryOf.get(r.epoch) !== r.node || r.epoch < newest) return false;
    newest = r.epoch;
  }
  return true;
};

const inRange = (actual: number, expected: number | Range): boolean =>
  typeof expected === 'number' ? actual === expected : (expected.min === undefined || actual >= expected.min) && (expected.max === undefined || actual <= expected.max);

const checkExpectations = (expect: Expectations, actual: Record<keyof Expectations, number | null>): Report['expectations'] =>
  (Object.keys(expect) as (keyof Expectations)[]).map((name) => {
    const expected = expect[name];
    const value = actual[name];
    let ok: boolean;
    if (expected === undefined) ok = true;
    else if (name === 'maxDetectSeconds' || name === 'maxFailoverSeconds' || name === 'maxTrafficSeconds') ok = value !== null && value <= (expected as number);
    else ok = value !== null && inRange(value, expected);
    return { name, expected, actual: value, ok };
  });

/** Worst delay over incidents of one kind of step; null when some incident never got there. */
const worst = (incidents: Incident[], step: (i: Incident) => number | null, applies: (i: Incident) => boolean): number | null => {
  const relevant = incidents.filter(applies);
  if (relevant.length === 0) return 0;
  const delays = relevant.map((i) => {
    const t = step(i);
    return t === null ? null : t - i.faultAt;
  });
  return delays.some((d) => d === null) ? null : round(Math.max(...(delays as number[])));
};

/**
 * Turns a drill's observations into its report: incidents, task accounting (Jepsen-style:
 * lost and duplicated), epochs, invariants and the scenario's expectations.
 */
export const buildReport = (scenario: Scenario, o: Observations, meta: { seed: number; timeScale: number; wallSeconds: number }): Report => {
  const epochs = epochsOf(o);
  const failoverEpochs = epochs.slice(1);
  const incidents = buildIncidents(o, epochs);
  const completed = o.enqueued.filter((id) => (o.completions.get(id) ?? 0) > 0).length;
  const duplicates = [...o.completions.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  // A failover away from a node that no fault touched before it is a false one.
  const falseFailovers = failoverEpochs.filter((e, i) => {
    const from = epochs[i]?.primary ?? '';
    return !o.faults.some((f) => f.node === from && f.at <= e.from && JUSTIFIES_FAILOVER.has(f.kind));
  }).length;
  const tasks = { enqueued: o.enqueued.length, completed, lost: o.enqueued.length - completed, duplicateCompletions: duplicates, deadLettered: o.deadLettered };
  const invariants = {
    singlePrimaryPerEpoch: singlePrimary(o, epochs),
    noLostTasks: tasks.lost === 0,
    noDuplicateCompletions: duplicates === 0,
    noFalseFailovers: falseFailovers === 0,
  };
  const expectations = checkExpectations(scenario.expect, {
    restarts: o.restarts.length,
    failovers: failoverEpochs.length,
    maxDetectSeconds: worst(incidents, (i) => i.detectedAt, (i) => DETECTION[i.fault] !== undefined),
    maxFailoverSeconds: worst(incidents, (i) => i.failoverAt, (i) => i.failoverAt !== null),
    maxTrafficSeconds: worst(incidents, (i) => i.trafficAt, (i) => i.failoverAt !== null),
    lostTasks: tasks.lost,
    duplicateCompletions: duplicates,
    falseFailovers,
  });
  const ok = expectations.every((e) => e.ok) && Object.values(invariants).every(Boolean);
  return {
    scenario: scenario.name,
    seed: meta.seed,
    timeScale: meta.timeScale,
    wallSeconds: Math.round(meta.wallSeconds * 10) / 10,
    ok,
    expectations,
    incidents,
    tasks,
    epochs,
    invariants,
    timeline: o.timeline.map((e) => ({ ...e, t: round(e.t) ?? 0 })),
    aws: { ...o.aws, lambdaInvocations: o.lambdaInvocations },
  };
};
