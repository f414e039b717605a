import { z } from 'zod';
import { KEYS } from './keys';
import { nodeNameSchema, storedVersion } from './schemas';

/** Kinds of incident steps; each is written once under `events/` and alerted on SNS. */
export const EVENT_KINDS = [
  'STALLED',
  'RESTART_SENT',
  'RESTART_RESULT',
  'RESTART_FAILED',
  'RESTART_BUDGET_EXHAUSTED',
  'STILL_STALLED',
  'NODE_DEAD',
  'NODE_SILENT',
  'AGENT_DEAD',
  'REDUNDANCY_LOST',
  'STANDBY_UNREADY',
  'REJOIN_FAILED',
  'NO_STANDBY',
  'FAILOVER_STARTED',
  'OLD_PRIMARY_STOPPED',
  'PROMOTED',
  'RECORD_CHANGED',
  'FAILOVER_FAILED',
  'POISON_TASK',
  'DEAD_LETTERED',
  'NOTIFIER_FAILED',
  'MANIFEST_DAMAGED',
  'LEADER_DAMAGED',
  'STATE_DAMAGED',
  'INPUT_HELD',
  'INPUT_RESUMED',
  'INPUT_WAITING',
  'OUTAGE',
  'RECOVERED',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Metrics that justified a step, copied from the samples. */
export const eventMetricsSchema = z.object({
  failingSamples: z.number().int().min(0),
  healthySamples: z.number().int().min(0),
  fault: z.enum(['no-worker', 'no-progress']).nullable(),
  workerProcesses: z.number().int().min(0).nullable(),
  cpuPercent: z.number().min(0).nullable(),
  memoryBytes: z.number().int().min(0).nullable(),
  backlog: z.number().int().min(0).nullable(),
  completionsInWindow: z.number().int().min(0).nullable(),
  inFlight: z.number().int().min(0).nullable(),
});
export type EventMetrics = z.output<typeof eventMetricsSchema>;

/** `events/<incidentId>/<kind>.json`, and the body of every alert. */
export const fleetEventSchema = z.object({
  version: storedVersion(1),
  id: z.string().min(1).max(200),
  incidentId: z.string().min(1).max(160),
  kind: z.enum(EVENT_KINDS),
  node: nodeNameSchema,
  epoch: z.number().int().min(0),
  /** The watchdog's clock, ms since the epoch. */
  at: z.number(),
  summary: z.string().max(1000),
  next: z.string().max(500),
  metrics: eventMetricsSchema,
  commandId: z.string().max(64).optional(),
  /** For failover steps: the node taking over and the epoch it holds. */
  newPrimary: nodeNameSchema.optional(),
  newEpoch: z.number().int().min(0).optional(),
  /** The automation was paused (`fleet pause`) when the step was judged: it is alerted, not acted on. */
  paused: z.literal(true).optional(),
});
export type FleetEvent = z.output<typeof fleetEventSchema>;

/** The key of an event object below the state prefix. */
export const eventKey = (event: Pick<FleetEvent, 'incidentId' | 'kind'>): string =>
  KEYS.event(event.incidentId, event.kind);

/**
 * True when two events are the same incident step: what concurrent or repeated runs of one
 * step write under one id (their times and wording may differ, the step may not).
 */
export const sameStep = (a: FleetEvent, b: FleetEvent): boolean =>
  a.id === b.id &&
  a.kind === b.kind &&
  a.node === b.node &&
  a.epoch === b.epoch &&
  a.newPrimary === b.newPrimary &&
  a.newEpoch === b.newEpoch;
