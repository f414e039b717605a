import { redundantAfter } from './redundancy';
import { resumeAfter } from './resume';
import type { Expectations, Range, Scenario } from './scenario';
import type { Incident, Observations, Report } from './report-types';

export type { Incident, MetricSeries, Observations, Report, TimelineEntry } from './report-types';

const round = (t: number | null): number | null => (t === null ? null : Math.round(t * 10) / 10);
const firstAfter = <T extends { t: number }>(
  items: readonly T[],
  from: number,
  pred: (x: T) => boolean,
): T | undefined => items.find((x) => x.t >= from && pred(x));

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
  'blackhole-node': SILENCE,
  'kill-agent': SILENCE,
};

/**
 * Faults on a node that justify moving the primary role away from it: an s3-outage only when it
 * was aimed at that node (a fleet-wide one is scoped `cloud`, and a failover cures nothing then).
 */
const JUSTIFIES_FAILOVER = new Set([
  'stall-worker',
  'kill-node',
  'stop-node',
  'freeze-node',
  'reboot-node',
  'partition-node',
  'blackhole-node',
  'kill-agent',
  's3-outage',
  // An operator's planned handover: the role moves away from a healthy primary on purpose.
  'switchover',
]);
const NODE = /^node-\d+$/;
const justifies = (f: { kind: string; node: string }): boolean => JUSTIFIES_FAILOVER.has(f.kind) && NODE.test(f.node);

/**
 * Faults that stop or cut off a worker: only their in-flight tasks have anything to resume from.
 * Not an s3-outage: the worker goes on holding its tasks (SQS still answers it).
 */
const INTERRUPTS = new Set([...JUSTIFIES_FAILOVER, 'crash-worker', 'hang-stage'].filter((k) => k !== 's3-outage'));

/** Faults that stop the node's worker outright: it acts again once thawed, restarted or rebooted. */
const STOPS_WORKER = new Set(['stall-worker', 'freeze-node', 'crash-worker', 'kill-node', 'stop-node', 'reboot-node']);

/** When the faulted node's worker could act again: its next start or the fault's end; null if neither came. */
const backAt = (o: Observations, f: Observations['faults'][number]): number | null => {
  if (!STOPS_WORKER.has(f.kind)) return f.at;
  const started = firstAfter(o.workerStarts, f.at, (s) => s.node === f.node)?.t;
  const cleared = firstAfter(
    o.timeline,
    f.at,
    (e) => e.node === f.node && e.event === 'fault-cleared' && e.detail === f.kind,
  )?.t;
  const times = [started, cleared].filter((t) => t !== undefined);
  return times.length === 0 ? null : Math.min(...times);
};

/** Faults no worker has to stop for: consumption must go on through them (their consumeGap). */
const CARRIED_THROUGH = new Set([
  'corrupt-object',
  'lost-response',
  'clock-skew',
  'duplicate-watchdog',
  'watchdog-outage',
  'watchdog-crash',
  'notification-lag',
  'slow-tasks',
  'poison-task',
  's3-throttle',
  's3-latency',
]);

/**
 * The longest time in [from, to) in which no worker did any work the wire shows, counted from the
 * last before `from`: a receive from the task queue (an idle worker long-polls without pause), a
 * checkpoint or completion written, a message's visibility extended (a busy one).
 */
const consumeGap = (o: Observations, from: number, to: number): number => {
  const polls = [...o.receives.map((r) => r.t), ...o.writes.map((w) => w.t), ...o.extensions.map((x) => x.t)].sort(
    (a, b) => a - b,
  );
  let last = [...polls].reverse().find((t) => t < from) ?? from;
  let gap = 0;
  for (const t of polls.filter((p) => p >= from && p < to)) {
    gap = Math.max(gap, t - last);
    last = t;
  }
  return Math.max(gap, to - last);
};

/**
 * A switchover's gap: from the old primary's last act on the wire under its epoch (a receive, a
 * checkpoint or completion, an extension) to the new primary's first receive under the next one.
 */
const handoverGap = (o: Observations, moved: Report['epochs'][number] | undefined, from: string): number | null => {
  if (moved === undefined) return null;
  const old = moved.epoch - 1;
  const acts = [
    ...o.receives.filter((r) => r.node === from && r.epoch === old).map((r) => r.t),
    ...o.writes.filter((w) => w.node === from && w.epoch === old).map((w) => w.t),
    ...o.extensions.filter((x) => x.node === from && x.t < moved.from).map((x) => x.t),
  ];
  const first = o.receives.find((r) => r.node === moved.primary && r.epoch === moved.epoch)?.t;
  return acts.length === 0 || first === undefined ? null : first - Math.max(...acts);
};

/** The incidents of rejoins (a standby's worker restarted to make it ready), by their opening event. */
const rejoinIncidents = (o: Observations): Set<string> =>
  new Set(o.events.filter((e) => e.kind === 'STANDBY_UNREADY').map((e) => e.incidentId));

/** The watchdog's restarts of a worker to heal a stall, not to make a standby rejoin. */
const ladderRestarts = (o: Observations): Observations['restarts'] => {
  const rejoins = rejoinIncidents(o);
  return o.restarts.filter((r) => r.incidentId == null || !rejoins.has(r.incidentId));
};

/** Each fault's incident; `end` is when the faults end (the drain begins). */
const buildIncidents = (o: Observations, epochs: Report['epochs'], end: number): Incident[] =>
  o.faults.map((f) => {
    const detectKinds = DETECTION[f.kind];
    const detected =
      detectKinds === undefined
        ? undefined
        : firstAfter(o.events, f.at, (e) => e.node === f.node && detectKinds.includes(e.kind));
    const window =
      f.kind === 'stall-worker' && detected !== undefined
        ? [...o.windows].reverse().find((w) => w.node === f.node && w.t >= f.at && w.t <= detected.t)
        : undefined;
    const from = detected?.t ?? f.at;
    // A later fault on the same node has its own restarts.
    const until = Math.min(...o.faults.filter((g) => g.node === f.node && g.at > f.at).map((g) => g.at), Infinity);
    const restarted =
      f.kind === 'crash-worker'
        ? firstAfter(o.supervisorRestarts, f.at, (r) => r.node === f.node)?.t
        : detected === undefined
          ? undefined
          : (ladderRestarts(o).find((r) => r.t >= from && r.t < until && r.node === f.node && r.ok === true)
              ?.finishedAt ?? undefined);
    // The node recovered: healthy, or heard from again. A rejoin's RECOVERED is redundancy coming
    // back (redundantAt), not this.
    const rejoins = rejoinIncidents(o);
    const recovered =
      detected === undefined
        ? undefined
        : firstAfter(
            o.events,
            detected.t,
            (e) => e.node === f.node && e.kind === 'RECOVERED' && !rejoins.has(e.incidentId),
          );
    // The first change of primary away from the faulted node after the fault, unless a later
    // fault on the node came before it: that one caused it.
    const away = (e: Report['epochs'][number], i: number): boolean =>
      i > 0 && e.from >= f.at && epochs[i - 1]?.primary === f.node && e.primary !== f.node;
    const moved = justifies(f) ? epochs.find(away) : undefined;
    const later = (g: Observations['faults'][number]): boolean =>
      g !== f && g.node === f.node && justifies(g) && g.at > f.at;
    const superseded = moved !== undefined && o.faults.some((g) => later(g) && g.at <= moved.from);
    const failover = superseded ? undefined : moved;
    // Serving: its first receive under its epoch, or earlier, carrying on with a task the fenced primary held.
    const received =
      failover === undefined
        ? undefined
        : o.receives.find((r) => r.t >= failover.from && r.node === failover.primary && r.epoch === failover.epoch);
    const carried =
      failover === undefined
        ? undefined
        : o.extensions.find((x) => x.t >= failover.from && x.node === failover.primary);
    const serving = carried !== undefined && (received === undefined || carried.t < received.t) ? carried : received;
    const address = failover === undefined ? undefined : o.addresses[failover.primary];
    const traffic = failover === undefined ? undefined : o.dnsChanges.find((d) => d.t >= f.at && d.value === address);
    const resume = INTERRUPTS.has(f.kind)
      ? resumeAfter(o, { ...f, backAt: backAt(o, f) })
      : { inFlight: 0, resumedAt: null, unrecorded: 0, unrecordedResumedAt: null };
    // Until the next fault (or the drain): whatever came after is that fault's.
    const next = Math.min(...o.faults.filter((g) => g.at > f.at + 1).map((g) => g.at), end);
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
      unrecorded: resume.unrecorded,
      unrecordedResumedAt: round(resume.unrecordedResumedAt),
      redundantAt: round(redundantAfter(o, epochs, failover?.from ?? f.at)),
      consumeGapSeconds:
        f.kind === 'switchover'
          ? round(handoverGap(o, failover, f.node))
          : CARRIED_THROUGH.has(f.kind)
            ? round(consumeGap(o, f.at, next))
            : null,
    };
  });

const epochsOf = (o: Observations): Report['epochs'] => {
  const byEpoch = new Map<number, { epoch: number; primary: string; from: number }>();
  for (const l of o.leaders)
    if (!byEpoch.has(l.epoch)) byEpoch.set(l.epoch, { epoch: l.epoch, primary: l.primary, from: l.t });
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
  const acts = [
    ...o.receives.filter((r) => r.count > 0 && r.epoch !== null).map((r) => ({ t: r.t, epoch: r.epoch ?? 0 })),
    ...o.writes.map((w) => ({ t: w.t, epoch: w.epoch })),
  ].sort((a, b) => a.t - b.t);
  let newest = 0;
  for (const a of acts) {
    if (a.epoch < newest) return false;
    newest = a.epoch;
  }
  return true;
};

const inRange = (actual: number, expected: number | Range): boolean =>
  typeof expected === 'number'
    ? actual === expected
    : (expected.min === undefined || actual >= expected.min) && (expected.max === undefined || actual <= expected.max);

const BOUNDS: ReadonlySet<keyof Expectations> = new Set([
  'maxDetectSeconds',
  'maxFailoverSeconds',
  'maxTrafficSeconds',
  'maxVerdictSeconds',
  'maxServingSeconds',
  'maxResumeSeconds',
  'maxRedundantSeconds',
  'maxBacklog',
  'maxConsumeGapSeconds',
]);

const checkExpectations = (
  expect: Expectations,
  actual: Record<keyof Expectations, number | null>,
): Report['expectations'] =>
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
const worst = (
  incidents: Incident[],
  step: (i: Incident) => number | null,
  applies: (i: Incident) => boolean,
): number | null => {
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
export const buildReport = (
  scenario: Scenario,
  o: Observations,
  meta: { seed: number; timeScale: number; wallSeconds: number },
): Report => {
  const epochs = epochsOf(o);
  const failoverEpochs = epochs.slice(1);
  const incidents = buildIncidents(o, epochs, scenario.seconds);
  const completed = o.enqueued.filter((id) => (o.completions.get(id) ?? 0) > 0).length;
  const duplicates = [...o.completions.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  // A failover away from a node that no fault touched before it is a false one.
  const falseFailovers = failoverEpochs.filter((e, i) => {
    const from = epochs[i]?.primary ?? '';
    return !o.faults.some((f) => f.node === from && f.at <= e.from && justifies(f));
  }).length;
  const tasks = {
    enqueued: o.enqueued.length,
    completed,
    lost: o.enqueued.length - completed,
    duplicateCompletions: duplicates,
    deadLettered: o.deadLettered,
    givenBack: o.givenBack,
  };
  const input = {
    holds: o.events.filter((e) => e.kind === 'INPUT_HELD').length,
    resumes: o.events.filter((e) => e.kind === 'INPUT_RESUMED').length,
    maxBacklog: Math.max(0, ...o.depths.map((d) => d.backlog)),
    maxIntake: Math.max(0, ...o.depths.map((d) => d.intake)),
  };
  const invariants = {
    singlePrimaryPerEpoch: singlePrimary(o, epochs),
    noStaleEpochWrites: noStaleWrites(o),
    noLostTasks: tasks.lost === 0,
    noDuplicateCompletions: duplicates === 0,
    noFalseFailovers: falseFailovers === 0,
    ...(o.deliveries === undefined ? {} : { deliveriesValid: o.deliveries.every((d) => d.ok) }),
  };
  const expectations = checkExpectations(scenario.expect, {
    restarts: ladderRestarts(o).length,
    rejoins: o.events.filter((e) => e.kind === 'RECOVERED' && rejoinIncidents(o).has(e.incidentId)).length,
    failovers: failoverEpochs.length,
    maxDetectSeconds: worst(
      incidents,
      (i) => i.detectedAt,
      (i) => DETECTION[i.fault] !== undefined,
    ),
    // From the window's close, not the fault: the verdict's own latency.
    maxVerdictSeconds: worst(
      incidents.map((i) => ({ ...i, faultAt: i.windowAt ?? i.faultAt })),
      (i) => i.detectedAt,
      (i) => i.fault === 'stall-worker',
    ),
    maxServingSeconds: worst(
      incidents,
      (i) => i.servingAt,
      (i) => i.failoverAt !== null,
    ),
    maxResumeSeconds: worst(
      incidents,
      (i) => i.resumedAt,
      (i) => i.inFlight > 0,
    ),
    maxRedundantSeconds: worst(
      incidents,
      (i) => i.redundantAt,
      () => true,
    ),
    maxFailoverSeconds: worst(
      incidents,
      (i) => i.failoverAt,
      (i) => i.failoverAt !== null,
    ),
    maxTrafficSeconds: worst(
      incidents,
      (i) => i.trafficAt,
      (i) => i.failoverAt !== null,
    ),
    lostTasks: tasks.lost,
    duplicateCompletions: duplicates,
    falseFailovers,
    inputHolds: input.holds,
    maxBacklog: input.maxBacklog,
    deadLettered: o.deadLettered,
    maxConsumeGapSeconds: Math.max(
      0,
      ...incidents.flatMap((i) => (i.consumeGapSeconds === null ? [] : [i.consumeGapSeconds])),
    ),
  });
  // A fault that never struck proves nothing: the drill fails, naming it.
  const ok = expectations.every((e) => e.ok) && Object.values(invariants).every(Boolean) && o.unfired.length === 0;
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
    unfiredFaults: [...o.unfired],
    timeline: [...o.timeline].sort((a, b) => a.t - b.t).map((e) => ({ ...e, t: round(e.t) ?? 0 })),
    aws: { ...o.aws, lambdaInvocations: o.lambdaInvocations },
    requests: o.requests,
    cloud: o.cloud,
    heartbeatGaps: o.heartbeatGaps,
    artifacts: o.artifacts,
    stageStarts: o.stageStarts ?? {},
    deliveries: [...(o.deliveries ?? [])],
    metrics: o.metrics,
    input,
    series: seriesOf(o),
  };
};

/**
 * The queues' depths as sampled, and the tasks completed so far at each first completion (a task's
 * duplicates do not count).
 */
const seriesOf = (o: Observations): Report['series'] => {
  const seen = new Set<string>();
  const completed: [number, number][] = [];
  for (const w of [...o.writes].filter((x) => x.kind === 'done').sort((a, b) => a.t - b.t)) {
    if (seen.has(w.taskId)) continue;
    seen.add(w.taskId);
    completed.push([round(w.t) ?? 0, seen.size]);
  }
  return { depths: o.depths.map((d) => [round(d.t) ?? 0, d.backlog, d.intake]), completed };
};
