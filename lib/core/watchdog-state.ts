import { z } from 'zod';
import { sampleSchema, nodeNameSchema } from './schemas';

const counterSchema = z.strictObject({
  boot: z.string().nullable(),
  lastSeq: z.number().int().min(-1),
  last: sampleSchema.nullable(),
  failing: z.number().int().min(0),
  healthy: z.number().int().min(0),
  lastFault: z.enum(['no-worker', 'no-progress']).nullable(),
});

/** The restart step of an incident: claimed by a CAS, then sent, then verified. */
const restartSchema = z.strictObject({
  status: z.enum(['claimed', 'sent', 'succeeded', 'failed']),
  claimedAt: z.number(),
  commandId: z.string().max(64).optional(),
  sentAt: z.number().optional(),
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
});
export type RestartStep = z.output<typeof restartSchema>;

const incidentSchema = z.strictObject({
  id: z.string().min(1).max(160),
  openedAt: z.number(),
  epoch: z.number().int().min(0),
  restart: restartSchema.nullable(),
  /** Set once the node stayed stalled for a second full window after its restart. */
  escalated: z.boolean(),
});
export type Incident = z.output<typeof incidentSchema>;

const nodeStateSchema = z.strictObject({
  counter: counterSchema,
  incident: incidentSchema.nullable(),
  /** Watchdog-clock times of restarts issued in the last hour: the restart budget. */
  restartTimes: z.array(z.number()).max(1000),
  /** Incidents opened so far for this node: part of the next incident id. */
  incidents: z.number().int().min(0),
});
export type NodeWatch = z.output<typeof nodeStateSchema>;

/** `watchdog/state.json`: per-node counters and open incidents, written by CAS only. */
export const watchdogStateSchema = z.strictObject({
  version: z.literal(1),
  /** Bumped on every write so the ETag always changes. */
  revision: z.number().int().min(0),
  nodes: z.record(nodeNameSchema, nodeStateSchema),
});
export type WatchdogState = z.output<typeof watchdogStateSchema>;

export const emptyWatchdogState = (): WatchdogState => ({ version: 1, revision: 0, nodes: {} });
