import { z } from 'zod';
import { nodeNameSchema } from '../schemas';

/**
 * Maintenance: an operator's pause of the automation, and nodes taken out of rotation. Kept in
 * the watchdog's state, as the admission override is, so every run reads it with what it judges.
 * Pure.
 *
 * - Paused: the watchdog still judges and alerts, but sends no restart and claims no failover,
 *   and no standby takes a lapsed lease over. Claims made meanwhile go on once it ends. Its expiry
 *   is the watchdog's clock alone: the watchdog stamps it and ends the pause; no one else compares.
 * - Cordoned: a standby that is never promoted, whose silence and restarts are no incident.
 */
const noteSchema = z.object({
  /** When it was set (the operator's clock, ms). */
  at: z.number(),
  /** Who set it: `user@host` of the operator's machine. */
  by: z.string().max(200),
  reason: z.string().max(300).nullable().default(null),
});

export const maintenanceSchema = z.object({
  paused: noteSchema
    .extend({
      /** How long it lasts from the watchdog's first run that sees it (ms); null: until `fleet resume`. */
      forMs: z.number().positive().nullable().default(null),
      /** When it ends, by the watchdog's clock: stamped by that first run from `forMs`. */
      until: z.number().nullable().default(null),
    })
    .nullable()
    .default(null),
  cordoned: z.record(nodeNameSchema, noteSchema).default({}),
});
export type Maintenance = z.output<typeof maintenanceSchema>;
export type Note = z.output<typeof noteSchema>;

export const noMaintenance = (): Maintenance => ({ paused: null, cordoned: {} });

/** Whether the automation is paused: a pause is stored (the watchdog removes one that expired). */
export const isPaused = (m: Maintenance | undefined): boolean => m?.paused !== null && m?.paused !== undefined;

/**
 * The watchdog's step on a pause, by its own clock: a new one's expiry is stamped from `forMs`,
 * one past its expiry ends. The only place a pause's time is compared.
 */
export const settlePause = (m: Maintenance | undefined, now: number): Maintenance | undefined => {
  const p = m?.paused;
  if (m === undefined || p === null || p === undefined) return m;
  if (p.until === null && p.forMs !== null) return { ...m, paused: { ...p, until: now + p.forMs } };
  return p.until !== null && now >= p.until ? { ...m, paused: null } : m;
};

/** The cordoned nodes' names. */
export const cordonedNodes = (m: Maintenance | undefined): ReadonlySet<string> =>
  new Set(Object.keys(m?.cordoned ?? {}));

/** Why `node` may not take the role now, or null: the one rule the agents and the watchdog both apply. */
export const promotionHeld = (m: Maintenance | undefined, node: string): string | null => {
  if (m?.cordoned[node] !== undefined) return `${node} is cordoned (fleet uncordon ${node})`;
  if (isPaused(m)) return 'the fleet is paused (fleet resume)';
  return null;
};

/** An operator's change: each one is a pure step from the stored maintenance to the next. */
export type MaintenanceChange =
  | { kind: 'pause'; note: Note; forMs: number | null }
  | { kind: 'resume' }
  | { kind: 'cordon'; node: string; note: Note }
  | { kind: 'uncordon'; node: string };

export const applyChange = (m: Maintenance | undefined, change: MaintenanceChange): Maintenance => {
  const base = m ?? noMaintenance();
  switch (change.kind) {
    case 'pause':
      return { ...base, paused: { ...change.note, forMs: change.forMs, until: null } };
    case 'resume':
      return { ...base, paused: null };
    case 'cordon':
      return { ...base, cordoned: { ...base.cordoned, [change.node]: change.note } };
    case 'uncordon': {
      const cordoned = Object.fromEntries(Object.entries(base.cordoned).filter(([n]) => n !== change.node));
      return { ...base, cordoned };
    }
  }
};
