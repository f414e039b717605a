import { z } from 'zod';
import { nodeNameSchema } from '../schemas';
import type { Incident, Stage } from './incident';
import { stallCounterSchema } from './stall';

/**
 * `watchdog/state.json` version 1, frozen as the last release wrote it, and its converter to
 * version 2. In version 1 an incident's stage was implicit in four fields (`restart.status`,
 * `escalated`, `failover.status`, `noStandbyAlerted`, plus `confirmed`); the converter names
 * it, so an incident open across the upgrade carries on where it was.
 */

const restartV1 = z.strictObject({
  command: z.enum(['restartWorker', 'restartAgent']).default('restartWorker'),
  status: z.enum(['claimed', 'sent', 'succeeded', 'failed']),
  claimedAt: z.number(),
  commandId: z.string().max(64).optional(),
  sentAt: z.number().optional(),
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
});

const failoverV1 = z.strictObject({
  status: z.enum(['claimed', 'done', 'failed']),
  to: nodeNameSchema,
  fromEpoch: z.number().int().min(0),
  claimedAt: z.number(),
  outgoingStopped: z.boolean(),
  stopOutgoing: z.boolean(),
  toEpoch: z.number().int().min(0).optional(),
  finishedAt: z.number().optional(),
  detail: z.string().max(500).optional(),
});

export const incidentV1Schema = z.strictObject({
  id: z.string().min(1).max(160),
  kind: z.enum(['stall', 'dead', 'agent', 'standby']).default('stall'),
  openedAt: z.number(),
  epoch: z.number().int().min(0),
  restart: restartV1.nullable(),
  escalated: z.boolean(),
  failover: failoverV1.nullable().default(null),
  noStandbyAlerted: z.boolean().default(false),
  confirmed: z.boolean().optional(),
});
export type IncidentV1 = z.output<typeof incidentV1Schema>;

const nodeV1 = z.strictObject({
  counter: stallCounterSchema,
  incident: incidentV1Schema.nullable(),
  restartTimes: z.array(z.number()).max(1000),
  incidents: z.number().int().min(0),
  seen: z.strictObject({ boot: z.string(), seq: z.number().int(), at: z.number() }).nullable().default(null),
});

export const watchdogStateV1Schema = z.strictObject({
  version: z.literal(1),
  revision: z.number().int().min(0),
  nodes: z.record(nodeNameSchema, nodeV1),
  lastFailoverAt: z.number().nullable().default(null),
  origin: z.strictObject({ primary: nodeNameSchema, epoch: z.number().int().min(0) }).optional(),
});
export type WatchdogStateV1 = z.output<typeof watchdogStateV1Schema>;

/** The stage a version-1 incident was in, read from the fields that implied it. */
const stageOf = (i: IncidentV1): Stage => {
  const f = i.failover;
  if (f !== null) {
    const plan = {
      to: f.to,
      fromEpoch: f.fromEpoch,
      claimedAt: f.claimedAt,
      outgoingStopped: f.outgoingStopped,
      stopOutgoing: f.stopOutgoing,
    };
    // `done` was never stored (a finished failover closed its incident); resuming one is harmless, as every step is
    // idempotent.
    if (f.status === 'failed')
      return {
        name: 'failover-failed',
        failover: plan,
        detail: f.detail ?? 'failed',
        finishedAt: f.finishedAt ?? f.claimedAt,
      };
    return { name: 'failing-over', failover: plan };
  }
  const escalating = (why: 'still-stalled' | 'restart-failed' | 'budget' | 'confirmed-dead'): Stage => ({
    name: 'escalating',
    why,
    noStandbyAlerted: i.noStandbyAlerted,
  });
  // A dead incident that already looked for a standby was judged dead (files from before
  // `confirmed` existed did so on silence alone).
  if (i.kind === 'dead')
    return i.confirmed === true || i.noStandbyAlerted ? escalating('confirmed-dead') : { name: 'silent' };
  if (i.kind === 'stall' && i.escalated) return escalating('still-stalled');
  switch (i.restart?.status) {
    case 'claimed':
      return { name: 'restart-claimed' };
    case 'sent':
      return { name: 'restart-sent' };
    case 'failed':
      if (i.kind !== 'stall') return { name: 'watching' };
      return escalating(i.restart.detail === 'restart budget exhausted' ? 'budget' : 'restart-failed');
    default:
      return { name: 'watching' };
  }
};

/** One version-1 incident as version 2: its stage named, its restart kept as history. */
export const upgradeIncident = (i: IncidentV1): Incident => {
  const r = i.restart;
  const restart =
    r === null
      ? null
      : {
          command: r.command,
          claimedAt: r.claimedAt,
          commandId: r.commandId,
          sentAt: r.sentAt,
          finishedAt: r.finishedAt ?? (r.status === 'succeeded' || r.status === 'failed' ? r.claimedAt : undefined),
          detail: r.detail,
        };
  return {
    id: i.id,
    // An `agent` incident (a silent agent on a live node) is healed as a lost standby is: by an agent restart.
    kind: i.kind === 'agent' ? 'standby' : i.kind,
    openedAt: i.openedAt,
    epoch: i.epoch,
    stage: stageOf(i),
    restart:
      restart === null
        ? null
        : (Object.fromEntries(Object.entries(restart).filter(([, v]) => v !== undefined)) as typeof restart),
  };
};

/** The whole state, version 1 to version 2. */
export const upgradeV1 = (s: WatchdogStateV1) => ({
  version: 2 as const,
  revision: s.revision,
  // Membership starts afresh: version 1 timed nodes by other evidence.
  nodes: Object.fromEntries(
    Object.entries(s.nodes).map(([name, w]) => {
      const incident = w.incident === null ? null : upgradeIncident(w.incident);
      return [
        name,
        {
          counter: w.counter,
          restartTimes: w.restartTimes,
          incidents: w.incidents,
          rejoinTimes: [],
          newest: null,
          incident,
        },
      ];
    }),
  ),
  lastFailoverAt: s.lastFailoverAt,
  judgedAt: null,
  ...(s.origin === undefined ? {} : { origin: s.origin }),
});
