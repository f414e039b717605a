import { redundantAfter } from './redundancy';
import { resumeAfter } from './resume';
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
  /** Worker restarts the watchdog issued through SSM (t = when the command was sent), with the incident its comment names. */
  restarts: { t: number; node: string; finishedAt: number | null; ok: boolean | null; incidentId?: string | null }[];
  /** Worker starts by the node's supervisor after a crash (not watchdog restarts). */
  supervisorRestarts: { t: number; node: string }[];
  /** Every successful write of leader.json. */
  leaders: { t: number; epoch: number; primary: string }[];
  /** Every ReceiveMessage answered (empty long polls too), with the epoch the consumer claimed. */
  receives: { t: number; node: string; count: number; epoch: number | null; taskIds?: readonly string[] }[];
  /** Visibility extensions of a received message, by the node working on its task. */
  extensions: { t: number; node: string; taskId: string }[];
  /** Task-state writes that were applied (checkpoints, completions), with the epoch they carry. */
  writes: { t: number; node: string; kind: 'checkpoint' | 'done'; taskId: string; epoch: number }[];
  /** Each node's readiness as a standby by its own heartbeats, as changes (t 0: before the run). */
  readiness: { t: number; node: string; ready: boolean }[];
  /** When a primary's heartbeat carried the last sample of a full window of failing samples. */
  windows: { t: number; node: string }[];
  /** Every change of the origin record (applied by the API, and INSYNC), and each node's address in it. */
  dnsChanges: { t: number; value: string; insyncAt: number }[];
  addresses: Readonly<Record<string, string>>;
  /** Successful creations of done.json, per task id. */
  completions: ReadonlyMap<string, number>;
  enqueued: readonly string[];
  /** Messages in the dead-letter queue at the end (poison tasks). */
  deadLettered: number;
  /** Messages handed back at once (a task given up on: hung, failed, fenced, drained). */
  givenBack: number;
  timeline: TimelineEntry[];
  aws: Report['aws'];
  lambdaInvocations: number;
  /** How often the local cloud's unkind behaviours struck (lost responses, 409s, SlowDowns, …). */
  cloud: Record<string, number>;
  /** The longest gap between two heartbeats of each node, scenario seconds. */
  heartbeatGaps: Record<string, number>;
}

export interface Incident {
  node: string;
  fault: string;
  faultAt: number;
  /** The watchdog is expected to notice this fault (stalls, silent nodes); others are the fleet's own to absorb. */
  watched: boolean;
  /** For a stall: when the window of failing samples closed (the verdict is due from then). */
  windowAt: number | null;
  detectedAt: number | null;
  restartedAt: number | null;
  recoveredAt: number | null;
  /** leader.json names the new primary. */
  failoverAt: number | null;
  newPrimary: string | null;
  /** The new primary serves: its first receive under its epoch, or its first extension of a message the fenced primary held (it carries on with that task). */
  servingAt: number | null;
  /** The origin record names the new primary (Route 53's API), and when that change is INSYNC. */
  trafficAt: number | null;
  trafficInsyncAt: number | null;
  /** Tasks the faulted node held when the fault struck (received, not yet completed). */
  inFlight: number;
  /** When the last of them was taken up again (received anew, or completed); null if one never was. */
  resumedAt: number | null;
  /** When a node other than the primary was a ready standby again, from the failover (or the fault when none). */
  redundantAt: number | null;
}

export interface Report {
  scenario: string;
  seed: number;
  timeScale: number;
  wallSeconds: number;
  ok: boolean;
  expectations: { name: string; expected: unknown; actual: number | null; ok: boolean }[];
  incidents: Incident[];
  tasks: { enqueued: number; completed: number; lost: number; duplicateCompletions: number; deadLettered: number; givenBack: number };
  epochs: { epoch: number; primary: string; from: number; to: number | null }[];
  invariants: { singlePrimaryPerEpoch: boolean; noStaleEpochWrites: boolean; noLostTasks: boolean; noDuplicateCompletions: boolean; noFalseFailovers: boolean };
  timeline: TimelineEntry[];
  aws: { s3: { GET: number; PUT: number; LIST: number; HEAD: number }; sqs: number; sns: number; ssm: number; lambdaInvocations: number };
  /** What the faithful local cloud did to the run: how often each unkind behaviour struck. */
  cloud: Record<string, number>;
  /** The longest gap between two heartbeats of each node (scenario s), faults included: where a node hiccuped. */
  heartbeatGaps: Record<string, number>;
}

const round = (t: number | null): number | null => (t === null ? null : Math.round(t * 10) / 10);
const firstAfter = <T extends { t: number }>(items: readonly T[], from: number, pred: (x: T) => boolean): T | undefined =>
  items.find((x) => x.t >= from && pred(x));

/** The events that say the watchdog noticed a silent node (primary or standby). */
const SILENCE = ['NODE_DEAD', 'NODE_SILENT', 'REDUNDANCY_LOST'];

/** Faults the watchdog is expected to detect, and the events that say it did. */
const DETECTION: Readonly<Record<string, readonly string[]>> = {
  'stall-worker': ['STALLED'],
  'kill-node': SILENCE,
  'stop-node': SILENCE,
  'freeze-node': SILENCE,
  'reboot-node': SILENCE,
  'partition-node': SILENCE,
  'kill-agent': SILENCE,
};

/** Faults on a node that justify moving the primary role away from it. */
const JUSTIFIES_FAILOVER = new Set(['stall-worker', 'kill-node', 'stop-node', 'freeze-node', 'reboot-node', 'partition-node', 'kill-agent']);

/** The incidents of rejoins (a standby's worker restarted to make it ready), by their opening event. */
const rejoinIncidents = (o: Observations): Set<string> => new Set(o.events.filter((e) => e.kind === 'STANDBY_UNREADY').map((e) => e.incidentId));

/** The watchdog's restarts of a worker to heal a stall, not to make a standby rejoin. */
const ladderRestarts = (o: Observations): Observations['restarts'] => {
  const rejoins = rejoinIncidents(o);
  return o.restarts.filter((r) => r.incidentId == null || !rejoins.has(r.incidentId));
};

const buildIncidents = (o: Observations, epochs: Report['epochs']): Incident[] =>
  o.faults.map((f) => {
    const detectKinds = DETECTION[f.kind];
    const detected = detectKinds === undefined ? undefined : firstAfter(o.events, f.at, (e) => e.node === f.node && detectKinds.includes(e.kind));
    const window = f.kind === 'stall-worker' && detected !== undefined ? [...o.windows].reverse().find((w) => w.node === f.node && w.t >= f.at && w.t <= detected.t) : undefined;
    const from = detected?.t ?? f.at;
    const restarted =
      f.kind === 'crash-worker'
        ? firstAfter(o.supervisorRestarts, f.at, (r) => r.node === f.node)?.t
        : detected === undefined
          ? undefined
          : (ladderRestarts(o).find((r) => r.t >= from && r.node === f.node && r.ok === true)?.finishedAt ?? undefined);
    // The node recovered: healthy, or heard from again. A rejoin's RECOVERED is redundancy coming back (redundantAt), not this.
    const rejoins = rejoinIncidents(o);
    const recovered = detected === undefined ? undefined : firstAfter(o.events, detected.t, (e) => e.node === f.node && e.kind === 'RECOVERED' && !rejoins.has(e.incidentId));
    // The first change of primary away from the faulted node after the fault, unless a later
    // fault on the node came before it: that one caused it.
    const moved = JUSTIFIES_FAILOVER.has(f.kind) ? epochs.find((e, i) => i > 0 && e.from >= f.at && epochs[i - 1]?.primary === f.node && e.primary !== f.node) : undefined;
    const superseded = moved !== undefined && o.faults.some((g) => g !== f && g.node === f.node && JUSTIFIES_FAILOVER.has(g.kind) && g.at > f.at && g.at <= moved.from);
    const failover = superseded ? undefined : moved;
    // Serving: its first receive under its epoch, or earlier, carrying on with a task the fenced primary held.
    const received = failover === undefined ? undefined : o.receives.find((r) => r.t >= failover.from && r.node === failover.primary && r.epoch === failover.epoch);
    const carried = failover === undefined ? undefined : o.extensions.find((x) => x.t >= failover.from && x.node === failover.primary);
    const serving = carried !== undefined && (received === undefined || carried.t < received.t) ? carried : received;
    const address = failover === undefined ? undefined : o.addresses[failover.primary];
    const traffic = failover === undefined ? undefined : o.dnsChanges.find((d) => d.t >= f.at && d.value === address);
    const resume = resumeAfter(o, f);
    return {
      node: f.node,
      fault: f.kind,
      faultAt: round(f.at) ?? 0,
      watched: detectKinds !== undefined,
      windowAt: round(window?.t ?? null),
      detectedAt: round(detected?.t ?? null),
      restartedAt: round(restarted ?? null),
      recoveredAt: round(recovered?.t ?? null),
      failoverAt: round(failover?.from ?? null),
      newPrimary: failover?.primary ?? null,
      servingAt: round(serving?.t ?? null),
      trafficAt: round(traffic?.t ?? null),
      trafficInsyncAt: round(traffic?.insyncAt ?? null),
      inFlight: resume.inFlight,
      resumedAt: round(resume.resumedAt),
      redundantAt: round(redundantAfter(o, epochs, failover?.from ?? f.at)),
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
  for (const r of [...o.receives].filter((x) => x.count > 0).sort((a, b) => a.t - b.t)) {
    if (r.epoch === null || primaryOf.get(r.epoch) !== r.node || r.epoch < newest) return false;
    newest = r.epoch;
  }
  return true;
};

/**
 * Fencing, on the wire: once a newer epoch has acted (received a message, checkpointed or
 * completed a task), nothing of an older epoch is ever received, checkpointed or completed
 * again. A frozen primary that wakes after a failover must write nothing.
 */
const noStaleWrites = (o: Observations): boolean => {
  const acts = [...o.receives.filter((r) => r.count > 0 && r.epoch !== null).map((r) => ({ t: r.t, epoch: r.epoch ?? 0 })), ...o.writes.map((w) => ({ t: w.t, epoch: w.epoch }))].sort((a, b) => a.t - b.t);
  let newest = 0;
  for (const a of acts) {
    if (a.epoch < newest) return false;
    newest = a.epoch;
  }
  return true;
};

const inRange = (actual: number, expected: number | Range): boolean =>
  typeof expected === 'number' ? actual === expected : (expected.min === undefined || actual >= expected.min) && (expected.max === undefined || actual <= expected.max);

const BOUNDS: ReadonlySet<keyof Expectations> = new Set(['maxDetectSeconds', 'maxFailoverSeconds', 'maxTrafficSeconds', 'maxVerdictSeconds', 'maxServingSeconds', 'maxResumeSeconds', 'maxRedundantSeconds']);

const checkExpectations = (expect: Expectations, actual: Record<keyof Expectations, number | null>): Report['expectations'] =>
  (Object.keys(expect) as (keyof Expectations)[]).map((name) => {
    const expected = expect[name];
    const value = actual[name];
    let ok: boolean;
    if (expected === undefined) ok = true;
    else if (BOUNDS.has(name)) ok = value !== null && value <= (expected as number);
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
  const tasks = { enqueued: o.enqueued.length, completed, lost: o.enqueued.length - completed, duplicateCompletions: duplicates, deadLettered: o.deadLettered, givenBack: o.givenBack };
  const invariants = {
    singlePrimaryPerEpoch: singlePrimary(o, epochs),
    noStaleEpochWrites: noStaleWrites(o),
    noLostTasks: tasks.lost === 0,
    noDuplicateCompletions: duplicates === 0,
    noFalseFailovers: falseFailovers === 0,
  };
  const expectations = checkExpectations(scenario.expect, {
    restarts: ladderRestarts(o).length,
    rejoins: o.events.filter((e) => e.kind === 'RECOVERED' && rejoinIncidents(o).has(e.incidentId)).length,
    failovers: failoverEpochs.length,
    maxDetectSeconds: worst(incidents, (i) => i.detectedAt, (i) => DETECTION[i.fault] !== undefined),
    // From the window's close, not the fault: the verdict's own latency.
    maxVerdictSeconds: worst(incidents.map((i) => ({ ...i, faultAt: i.windowAt ?? i.faultAt })), (i) => i.detectedAt, (i) => i.fault === 'stall-worker'),
    maxServingSeconds: worst(incidents, (i) => i.servingAt, (i) => i.failoverAt !== null),
    maxResumeSeconds: worst(incidents, (i) => i.resumedAt, (i) => i.inFlight > 0),
    maxRedundantSeconds: worst(incidents, (i) => i.redundantAt, () => true),
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
    cloud: o.cloud,
    heartbeatGaps: o.heartbeatGaps,
  };
};
