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
  /** ReceiveMessage calls that handed out messages. */
  receives: { t: number; node: string; count: number }[];
  /** Successful creations of done.json, per task id. */
  completions: ReadonlyMap<string, number>;
  enqueued: readonly string[];
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
  tasks: { enqueued: number; completed: number; lost: number; duplicateCompletions: number };
  epochs: { epoch: number; primary: string; from: number; to: number | null }[];
  invariants: { singlePrimaryPerEpoch: boolean; noLostTasks: boolean; noDuplicateCompletions: boolean; noFalseFailovers: boolean };
  timeline: TimelineEntry[];
  aws: { s3: { GET: number; PUT: number; LIST: number; HEAD: number }; sqs: number; sns: number; ssm: number; lambdaInvocations: number };
}

const round = (t: number | null): number | null => (t === null ? null : Math.round(t * 10) / 10);
const firstAfter = <T extends { t: number }>(items: readonly T[], from: number, pred: (x: T) => boolean): T | undefined =>
  items.find((x) => x.t >= from && pred(x));

/** Faults the watchdog is expected to detect: their detection time is bounded. */
const DETECTED_FAULTS = new Set(['stall-worker']);

const buildIncidents = (o: Observations, failovers: Report['epochs']): Incident[] =>
  o.faults.map((f) => {
    const detected = firstAfter(o.events, f.at, (e) => e.node === f.node && e.kind === 'STALLED');
    const from = detected?.t ?? f.at;
    const restarted =
      f.kind === 'crash-worker'
        ? firstAfter(o.supervisorRestarts, f.at, (r) => r.node === f.node)?.t
        : o.restarts.find((r) => r.t >= from && r.node === f.node && r.ok === true)?.finishedAt ?? undefined;
    const recovered = detected === undefined ? undefined : firstAfter(o.events, detected.t, (e) => e.node === f.node && e.kind === 'RECOVERED');
    const failover = failovers.find((e) => e.from >= f.at && e.primary !== f.node);
    return {
      node: f.node,
      fault: f.kind,
      faultAt: round(f.at) ?? 0,
      detectedAt: round(detected?.t ?? null),
      restartedAt: round(restarted ?? null),
      recoveredAt: round(recovered?.t ?? null),
      failoverAt: round(failover?.from ?? null),
      newPrimary: failover?.primary ?? null,
      trafficAt: null,
    };
  });

const epochsOf = (o: Observations): Report['epochs'] => {
  const byEpoch = new Map<number, { epoch: number; primary: string; from: number }>();
  for (const l of o.leaders) if (!byEpoch.has(l.epoch)) byEpoch.set(l.epoch, { epoch: l.epoch, primary: l.primary, from: l.t });
  const list = [...byEpoch.values()].sort((a, b) => a.epoch - b.epoch);
  return list.map((e, i) => ({ ...e, from: round(e.from) ?? 0, to: round(list[i + 1]?.from ?? null) }));
};

/** Every receive must come from the primary of the epoch in force at that moment. */
const singlePrimary = (o: Observations, epochs: Report['epochs']): boolean =>
  o.receives.every((r) => {
    const current = [...epochs].reverse().find((e) => e.from <= r.t);
    return current !== undefined && current.primary === r.node;
  });

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
  const incidents = buildIncidents(o, failoverEpochs);
  const completed = o.enqueued.filter((id) => (o.completions.get(id) ?? 0) > 0).length;
  const duplicates = [...o.completions.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  const faultedPrimaries = new Set(o.faults.map((f) => f.node));
  const falseFailovers = failoverEpochs.filter((_e, i) => !faultedPrimaries.has(epochs[i]?.primary ?? '')).length;
  const tasks = { enqueued: o.enqueued.length, completed, lost: o.enqueued.length - completed, duplicateCompletions: duplicates };
  const invariants = {
    singlePrimaryPerEpoch: singlePrimary(o, epochs),
    noLostTasks: tasks.lost === 0,
    noDuplicateCompletions: duplicates === 0,
    noFalseFailovers: falseFailovers === 0,
  };
  const expectations = checkExpectations(scenario.expect, {
    restarts: o.restarts.length,
    failovers: failoverEpochs.length,
    maxDetectSeconds: worst(incidents, (i) => i.detectedAt, (i) => DETECTED_FAULTS.has(i.fault)),
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
