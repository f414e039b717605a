import { z } from 'zod';
import { nodeNameSchema } from '../schemas';
import { emptyCounter, stallCounterSchema } from './stall';

/** The restart step of an incident: claimed by a CAS, then sent, then verified. */
const restartSchema = z.strictObject({
  /** Which fixed node command: the worker (stalls) or the agent (a silent agent on a live node). */
  command: z.enum(['restartWorker', 'restartAgent']).default('restartWorker'),
  status: z.enum(['claimed', 'sent', 'succeeded', 'failed']),
  claimedAt: z.number(),
  commandId: z.string().max(64).optional(),
  sentAt: z.number().optional(),
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
});
export type RestartStep = z.output<typeof restartSchema>;

/** The failover step of an incident: claimed by a CAS, then carried out step by idempotent step. */
const failoverSchema = z.strictObject({
  status: z.enum(['claimed', 'done', 'failed']),
  to: nodeNameSchema,
  fromEpoch: z.number().int().min(0),
  claimedAt: z.number(),
  /** The old primary is confirmed stopped (its instance is stopped): no stop command needed. */
  outgoingStopped: z.boolean(),
  /** The old primary's instance answers SSM: try to stop its worker first. */
  stopOutgoing: z.boolean(),
  toEpoch: z.number().int().min(0).optional(),
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
});
export type FailoverStep = z.output<typeof failoverSchema>;

export const INCIDENT_KINDS = ['stall', 'dead', 'agent', 'standby'] as const;

const incidentSchema = z.strictObject({
  id: z.string().min(1).max(160),
  /** stall: the primary stopped making progress; dead: the primary's node is gone; agent: a
   * node's agent is silent on a live instance; standby: a standby's node is gone. */
  kind: z.enum(INCIDENT_KINDS).default('stall'),
  openedAt: z.number(),
  epoch: z.number().int().min(0),
  restart: restartSchema.nullable(),
  /** Set once the node stayed stalled for a second full window after its restart. */
  escalated: z.boolean(),
  failover: failoverSchema.nullable().default(null),
  /** Set once the "no ready standby" alert went out for this incident. */
  noStandbyAlerted: z.boolean().default(false),
  /** A silent node's incident: set once AWS confirmed the machine is gone (NODE_DEAD). */
  confirmed: z.boolean().optional(),
});
export type Incident = z.output<typeof incidentSchema>;

const nodeStateSchema = z.strictObject({
  counter: stallCounterSchema,
  incident: incidentSchema.nullable(),
  /** Watchdog-clock times of restarts issued in the last hour: the restart budget. */
  restartTimes: z.array(z.number()).max(1000),
  /** Incidents opened so far for this node: part of the next incident id. */
  incidents: z.number().int().min(0),
  /** The newest sample seen from this node and when (the watchdog's clock): silence is measured from it. */
  seen: z.strictObject({ boot: z.string(), seq: z.number().int(), at: z.number() }).nullable().default(null),
});
export type NodeWatch = z.output<typeof nodeStateSchema>;

/** `watchdog/state.json`: per-node counters and open incidents, written by CAS only. */
export const watchdogStateSchema = z.strictObject({
  version: z.literal(1),
  /** Bumped on every write so the ETag always changes. */
  revision: z.number().int().min(0),
  nodes: z.record(nodeNameSchema, nodeStateSchema),
  /** When the last failover was carried out (watchdog clock): the cooldown runs from it. */
  lastFailoverAt: z.number().nullable().default(null),
  /** The primary and epoch the origin record was last made to point at: traffic follows the lease. */
  origin: z.strictObject({ primary: nodeNameSchema, epoch: z.number().int().min(0) }).optional(),
});
export type WatchdogState = z.output<typeof watchdogStateSchema>;

export const emptyWatchdogState = (): WatchdogState => ({ version: 1, revision: 0, nodes: {}, lastFailoverAt: null });

/** A node the watchdog has no record of yet. */
export const emptyWatch = (): NodeWatch => ({ counter: emptyCounter(), incident: null, restartTimes: [], incidents: 0, seen: null });
