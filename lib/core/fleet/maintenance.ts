import { z } from 'zod';
import { nodeNameSchema } from '../schemas';

/**
 * Maintenance: an operator's pause of the automation, and nodes taken out of rotation. Kept in
 * the watchdog's state, as the admission override is, so every run reads it with what it judges.
 * Pure.
 *
 * - Paused: the watchdog still judges and alerts, but sends no restart and claims no failover,
 *   and no standby takes a lapsed lease over. Claims made meanwhile go on once it ends.
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
      /** When the pause ends by itself (the watchdog's clock); null: until `fleet resume`. */
      until: z.number().nullable().default(null),
    })
    .nullable()
    .default(null),
  cordoned: z.record(nodeNameSchema, noteSchema).default({}),
});
export type Maintenance = z.output<typeof maintenanceSchema>;
export type Note = z.output<typeof noteSchema>;

export const noMaintenance = (): Maintenance => ({ paused: null, cordoned: {} });

/** Whether the automation is paused at `now`: a pause with an expiry in the past has ended. */
export const isPaused = (m: Maintenance | undefined, now: number): boolean =>
  m?.paused !== null && m?.paused !== undefined && (m.paused.until === null || now < m.paused.until);

/** The cordoned nodes' names. */
export const cordonedNodes = (m: Maintenance | undefined): ReadonlySet<string> =>
  new Set(Object.keys(m?.cordoned ?? {}));

/** Why `node` may not take the role now, or null: the one rule the agents and the watchdog both apply. */
export const promotionHeld = (m: Maintenance | undefined, node: string, now: number): string | null => {
  if (m?.cordoned[node] !== undefined) return `${node} is cordoned (fleet uncordon ${node})`;
  if (isPaused(m, now)) return 'the fleet is paused (fleet resume)';
  return null;
};

/** An operator's change: each one is a pure step from the stored maintenance to the next. */
export type MaintenanceChange =
  | { kind: 'pause'; note: Note; until: number | null }
  | { kind: 'resume' }
  | { kind: 'cordon'; node: string; note: Note }
  | { kind: 'uncordon'; node: string };

export const applyChange = (m: Maintenance | undefined, change: MaintenanceChange): Maintenance => {
  const base = m ?? noMaintenance();
  switch (change.kind) {
    case 'pause':
      return { ...base, paused: { ...change.note, until: change.until } };
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
