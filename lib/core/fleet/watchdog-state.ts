import { z } from 'zod';
import { nodeNameSchema, storedVersion } from '../schemas';
import { incidentSchema } from './incident';
import { upgradeV1, watchdogStateV1Schema } from './watchdog-state-v1';
import { emptyCounter, stallCounterSchema } from './stall';
import { admissionSchema, emptyAdmission } from './admission';
import { deadLettersSchema, RISE_WATCHES, type RiseWatch } from './dead-letters';
import { INTAKE_WAIT_PREFIX, intakeWaitSchema } from './intake-wait';
import { maintenanceSchema } from './maintenance';

const nodeStateSchema = z.object({
  counter: stallCounterSchema,
  incident: incidentSchema.nullable(),
  /** Watchdog-clock times of restarts issued in the last hour: the restart budget. */
  restartTimes: z.array(z.number()).max(1000),
  /** Watchdog-clock times of rejoin restarts in the last hour: a budget of their own, of the same size. */
  rejoinTimes: z.array(z.number()).max(1000).default([]),
  /** Incidents opened so far for this node: part of the next incident id. */
  incidents: z.number().int().min(0),
  /** The node's newest sample, and when it changed by the watchdog's clock (lib/core/fleet/membership.ts). */
  newest: z.object({ boot: z.string(), seq: z.number().int(), changedAt: z.number() }).nullable().default(null),
});
export type NodeWatch = z.output<typeof nodeStateSchema>;
export type { Incident } from './incident';

/** `watchdog/state.json` version 2: per-node counters and open incidents, each in one named stage. */
const watchdogStateV2Schema = z.object({
  version: storedVersion(2),
  /** Bumped on every write so the ETag always changes. */
  revision: z.number().int().min(0),
  nodes: z.record(nodeNameSchema, nodeStateSchema),
  /** When the last failover was carried out (watchdog clock): the cooldown runs from it. */
  lastFailoverAt: z.number().nullable().default(null),
  /**
   * When the stored judgement was made (watchdog clock). A run that finds it older than a
   * silence takes knows the watchdog was not looking meanwhile, whatever container it ran in.
   */
  judgedAt: z.number().nullable().default(null),
  /** The lease as last read, and when it changed by the watchdog's clock (lib/core/fleet/liveness.ts). */
  lease: z
    .object({
      primary: nodeNameSchema,
      epoch: z.number().int().min(0),
      renewals: z.number().int().min(0),
      changedAt: z.number(),
    })
    .optional(),
  /** The primary and epoch the origin record was last made to point at: traffic follows the lease. */
  origin: z.object({ primary: nodeNameSchema, epoch: z.number().int().min(0) }).optional(),
  /** Backpressure: whether intake input is held, and the operator's override (lib/core/fleet/admission.ts). */
  admission: admissionSchema.optional(),
  /** The dead-letter queue's depth at the last read, and the alerts of its rises (lib/core/fleet/dead-letters.ts). */
  deadLetters: deadLettersSchema.optional(),
  /** The Slack notifier's failure queue, watched the same way (NOTIFIER_FAILED). */
  notifierFailures: deadLettersSchema.optional(),
  /** A spell of input waiting in the intake queue, and its alert (lib/core/fleet/intake-wait.ts). */
  intakeWait: intakeWaitSchema.optional(),
  /** The operator's pause and cordons (lib/core/fleet/maintenance.ts). */
  maintenance: maintenanceSchema.optional(),
});
export type WatchdogState = z.output<typeof watchdogStateV2Schema>;

/**
 * `watchdog/state.json` as read: version 2, or version 1 converted on read (its open incidents
 * carry on in the stage they were in). It is written back as version 2 by the next CAS. Told
 * apart by `version`, so a damaged state names its damaged field, not the whole object.
 */
export const watchdogStateSchema: z.ZodType<WatchdogState, unknown> = z.discriminatedUnion('version', [
  watchdogStateV2Schema,
  watchdogStateV1Schema.transform(upgradeV1),
]);

export const emptyWatchdogState = (): WatchdogState => ({
  version: 2,
  revision: 0,
  nodes: {},
  lastFailoverAt: null,
  judgedAt: null,
});

/** A node the watchdog has no record of yet. */
export const emptyWatch = (): NodeWatch => ({
  counter: emptyCounter(),
  incident: null,
  restartTimes: [],
  rejoinTimes: [],
  incidents: 0,
  newest: null,
});

const INCIDENT_ID = /^(.+)-e\d+-i(\d+)$/;
/** `<prefix>-<n>`: the n of an id a counter of the state names events by. */
const counted = (prefix: string, id: string): number => Number(new RegExp(`^${prefix}-(\\d+)$`).exec(id)?.[1]);

/**
 * The state a rebuild starts from (none stored, or a damaged one copied aside): empty, but with
 * each counter that names events at the highest value the written events' incident ids show, so
 * no new event id repeats an old one (its alert would be taken for a repeat and not sent). Pure.
 */
export const seededState = (incidentIds: readonly string[]): WatchdogState => {
  const state = emptyWatchdogState();
  let admissions = 0;
  const rises: Record<RiseWatch, number> = { deadLetters: 0, notifierFailures: 0 };
  let intakeWaits = 0;
  for (const id of incidentIds) {
    const incident = INCIDENT_ID.exec(id);
    const node = incident?.[1];
    const count = Number(incident?.[2]);
    // Keys are anyone's who can write events/: a counter past the safe integers could not be stored back.
    if (node !== undefined && nodeNameSchema.safeParse(node).success && Number.isSafeInteger(count)) {
      const watch = state.nodes[node] ?? emptyWatch();
      state.nodes[node] = { ...watch, incidents: Math.max(watch.incidents, count) };
    }
    const admission = counted('admission', id);
    if (Number.isSafeInteger(admission)) admissions = Math.max(admissions, admission);
    for (const which of Object.keys(rises) as RiseWatch[]) {
      const n = counted(RISE_WATCHES[which].idPrefix, id);
      if (Number.isSafeInteger(n)) rises[which] = Math.max(rises[which], n);
    }
    const wait = counted(INTAKE_WAIT_PREFIX, id);
    if (Number.isSafeInteger(wait)) intakeWaits = Math.max(intakeWaits, wait);
  }
  // The depth last seen is not known: the next read alerts what the queue holds, once.
  return {
    ...state,
    ...(admissions === 0 ? {} : { admission: { ...emptyAdmission(), changes: admissions } }),
    ...(rises.deadLetters === 0 ? {} : { deadLetters: { seen: 0, alerts: rises.deadLetters } }),
    ...(rises.notifierFailures === 0 ? {} : { notifierFailures: { seen: 0, alerts: rises.notifierFailures } }),
    ...(intakeWaits === 0 ? {} : { intakeWait: { since: null, alerts: intakeWaits, alerted: false } }),
  };
};
