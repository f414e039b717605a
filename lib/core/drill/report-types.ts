/** The drill report and what it is built from, apart from how it is built (report.ts). */
import type { RequestFigures } from './requests';
import type { Unfired } from './trigger';

/** One line of a drill's timeline, in scenario seconds. */
export interface TimelineEntry {
  t: number;
  node: string;
  event: string;
  detail: string;
}

/** What the drill saw on the wire and from the fleet, in scenario seconds. */
export interface Observations {
  /**
   * `recorded`: the tasks whose receipts the faulted node had kept where the fleet can find them
   * when the fault struck (its worker's held.json for a worker fault, its last heartbeat when the
   * whole node went), or undefined when not known. A message received an instant before the
   * fault, whose receipt never reached disk, can only wait out its visibility timeout.
   */
  faults: { at: number; kind: string; node: string; recorded?: readonly string[] }[];
  /** Faults that waited for an event (`at: { after: … }`) that never came within the run: each fails the drill. */
  unfired: readonly Unfired[];
  /** Incident steps written by the watchdog (events/ objects). */
  events: { t: number; kind: string; node: string; incidentId: string }[];
  /**
   * Worker restarts the watchdog issued through SSM (t = when the command was sent), with the
   * incident its comment names.
   */
  restarts: { t: number; node: string; finishedAt: number | null; ok: boolean | null; incidentId?: string | null }[];
  /** Worker starts by the node's supervisor after a crash (not watchdog restarts). */
  supervisorRestarts: { t: number; node: string }[];
  /** Every start of a node's worker: by its supervisor, at boot, or by a watchdog restart. */
  workerStarts: { t: number; node: string }[];
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
  requests: RequestFigures;
  lambdaInvocations: number;
  /** How often the local cloud's unkind behaviours struck (lost responses, 409s, SlowDowns, …). */
  cloud: Record<string, number>;
  /**
   * The longest gap between two signs of each node's life (a heartbeat, a beat, a renewal that
   * carried its sample), scenario seconds.
   */
  heartbeatGaps: Record<string, number>;
  /** Each task's artifacts as its last checkpoint names them. */
  artifacts: Record<string, TaskArtifact[]>;
  /** How often each task's stages started on any node, from the workers' logs (task id, then stage). */
  stageStarts?: Record<string, Record<string, number>>;
  /** A media drill's delivered renditions as ffprobe found them; none without `media`. */
  deliveries?: readonly Delivery[];
  /** The task queue's and the intake queue's depths (visible and in flight), sampled every sample interval. */
  depths: { t: number; backlog: number; intake: number }[];
  metrics: MetricSeries[];
}

/**
 * One metric the watchdog published (Embedded Metric Format, lib/core/metrics/), as the drill
 * captured it: a node's, or the fleet's (node null); `[t, value]` in scenario seconds, and a
 * duration in scenario seconds too.
 */
export interface MetricSeries {
  name: string;
  node: string | null;
  unit: string;
  points: [number, number][];
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
  /**
   * The new primary serves: its first receive under its epoch, or its first extension of a message
   * the fenced primary held (it carries on with that task).
   */
  servingAt: number | null;
  /** The origin record names the new primary (Route 53's API), and when that change is INSYNC. */
  trafficAt: number | null;
  trafficInsyncAt: number | null;
  /** Tasks the faulted node held when the fault struck (received, not yet completed), whose receipts it had kept. */
  inFlight: number;
  /** When the last of them was taken up again (received anew, or completed); null if one never was. */
  resumedAt: number | null;
  /**
   * Tasks received an instant before the fault whose receipts never reached disk (their visibility
   * timeout frees them), and when the last was taken up.
   */
  unrecorded: number;
  unrecordedResumedAt: number | null;
  /** When a node other than the primary was a ready standby again, from the failover (or the fault when none). */
  redundantAt: number | null;
  /**
   * For a fault no worker has to stop for (a damaged object, lost responses, a slow or skewed
   * cloud), the longest time no worker did any work the wire shows (a receive, a checkpoint or
   * completion, an extension), from the fault to the next one (or the drain): how long
   * consumption stopped at worst. For a switchover, from the old primary's last act under its
   * epoch (a receive, checkpoint, completion or extension) to the new primary's first receive under
   * the next. Null for other faults.
   */
  consumeGapSeconds: number | null;
}

/** A file a task's stage left, as its last checkpoint names it. */
export interface TaskArtifact {
  stage: string;
  path: string;
  size: number;
  sha256: string;
}

/** One task's delivered rendition, as ffprobe found it. */
export interface Delivery {
  taskId: string;
  ok: boolean;
  /** `h264/aac, 20.0 s`, or what is wrong. */
  detail: string;
}

export interface Report {
  scenario: string;
  seed: number;
  timeScale: number;
  wallSeconds: number;
  ok: boolean;
  expectations: { name: string; expected: unknown; actual: number | null; ok: boolean }[];
  incidents: Incident[];
  tasks: {
    enqueued: number;
    completed: number;
    lost: number;
    duplicateCompletions: number;
    deadLettered: number;
    givenBack: number;
  };
  epochs: { epoch: number; primary: string; from: number; to: number | null }[];
  invariants: {
    singlePrimaryPerEpoch: boolean;
    noStaleEpochWrites: boolean;
    noLostTasks: boolean;
    noDuplicateCompletions: boolean;
    noFalseFailovers: boolean;
    /** A media drill only: every task's delivered rendition passed ffprobe's check. */
    deliveriesValid?: boolean;
  };
  /** Faults whose event never came (so they never struck), each with its reason: the drill fails. */
  unfiredFaults: Unfired[];
  timeline: TimelineEntry[];
  aws: {
    s3: { GET: number; PUT: number; LIST: number; HEAD: number };
    sqs: number;
    dynamodb: number;
    sns: number;
    ssm: number;
    lambdaInvocations: number;
  };
  /**
   * The fleet's requests (nodes and watchdog, not the drill's setup): the control loop per scenario
   * hour, the work per completed task.
   */
  requests: RequestFigures;
  /** What the faithful local cloud did to the run: how often each unkind behaviour struck. */
  cloud: Record<string, number>;
  /**
   * The longest gap between two signs of each node's life (heartbeat, beat, renewal carrying its
   * sample; scenario s), faults included: where a node hiccuped.
   */
  heartbeatGaps: Record<string, number>;
  /** Each task's artifacts as its last checkpoint names them. */
  artifacts: Record<string, TaskArtifact[]>;
  /** How often each task's stages started on any node (task id, then stage): 1 each when none ran twice. */
  stageStarts: Record<string, Record<string, number>>;
  /** A media drill's delivered renditions, one per task, as ffprobe found them (empty without media). */
  deliveries: Delivery[];
  /** Backpressure: how often input was held and resumed, and the deepest each queue got. */
  input: { holds: number; resumes: number; maxBacklog: number; maxIntake: number };
  /** The watchdog's metrics at the fleet's `metrics` setting, as CloudWatch would have received them. */
  metrics: MetricSeries[];
  /**
   * Over scenario time: the task queue's and the intake queue's depths `[t, backlog, intake]`
   * (every sample interval), and the tasks completed so far `[t, n]` (at each first completion).
   */
  series: { depths: [number, number, number][]; completed: [number, number][] };
}
