import type { FleetEvent } from '../../lib/core/events';
import type { NodeSpec } from '../../lib/core/config';
import type { WatchdogSettings } from '../../lib/core/fleet/watchdog';
import type { Heartbeat, Leader, Sample } from '../../lib/core/schemas';

/** A healthy-looking sample; override what the case is about. */
export const sample = (seq: number, over: Partial<Sample> = {}): Sample => ({
  seq,
  at: 1_700_000_000_000 + seq * 15_000,
  workerProcesses: 1,
  cpuPercent: 3,
  memoryBytes: 50_000_000,
  completedTotal: 0,
  completionsInWindow: 0,
  inFlight: [],
  backlog: 5,
  epochSeen: 1,
  consumingEpoch: 1,
  proofAgeMs: 1_000,
  ...over,
});

/** `n` samples of a frozen worker: backlog steady, same task, same progress. */
export const frozen = (from: number, n: number, over: Partial<Sample> = {}): Sample[] =>
  Array.from({ length: n }, (_, i) => sample(from + i, { inFlight: [{ taskId: 'task-0001', progress: 7 }], ...over }));

/** `n` samples of a working worker: the task's progress advances each time. */
export const working = (from: number, n: number): Sample[] =>
  Array.from({ length: n }, (_, i) =>
    sample(from + i, { inFlight: [{ taskId: 'task-0001', progress: 10 + from + i }] }),
  );

export const heartbeat = (node: string, samples: Sample[], boot = 'boot-1'): Heartbeat => ({
  version: 1,
  node,
  boot,
  agentVersion: '0.1.0',
  role: node === 'node-1' ? 'primary' : 'standby',
  samples,
});

export const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 2 },
];

/** The watchdog's settings at their defaults, for the given nodes. */
export const watchdogSettings = (nodes: NodeSpec[]): WatchdogSettings => ({
  nodes,
  stallSamples: 8,
  recoverySamples: 2,
  restartBudgetPerHour: 3,
  restartVerifySeconds: 60,
  sampleIntervalSeconds: 15,
  failoverCooldownSeconds: 300,
  commandWaitSeconds: 10,
  leaseExpirySeconds: 30,
});

/** A leader record naming node-1; override what the case is about. */
export const leaderOf = (over: Partial<Leader> = {}): Leader => ({
  version: 1,
  primary: 'node-1',
  epoch: 1,
  renewals: 0,
  reason: 'test',
  changedBy: 'test',
  previous: null,
  handover: 'immediate',
  ...over,
});

/** A valid STALLED event, the base the hostile-input properties change one field of. */
export const stalledEvent: FleetEvent = {
  version: 1,
  id: 'node-1-e3-i1.STALLED',
  incidentId: 'node-1-e3-i1',
  kind: 'STALLED',
  node: 'node-1',
  epoch: 3,
  at: 1_700_000_120_000,
  summary: 'node-1 stalled.',
  next: 'The watchdog restarts the worker.',
  metrics: {
    failingSamples: 8,
    healthySamples: 0,
    fault: 'no-progress',
    workerProcesses: 1,
    cpuPercent: 3.1,
    memoryBytes: 52_428_800,
    backlog: 5,
    completionsInWindow: 0,
    inFlight: 1,
  },
};
