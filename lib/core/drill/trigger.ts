import { z } from 'zod';
import { MAX_STAGES } from '../pipeline';

/** A node a scenario names: the primary or the standby (resolved by the drill), or one by name. */
export const nodeTarget = z.union([
  z.enum(['primary', 'standby']),
  z.string().regex(/^node-[1-9][0-9]?$/, 'must be primary, standby or node-N'),
]);

/**
 * The kinds of event a fault may wait for, each seen on the wire: `checkpoint`, a checkpoint
 * written; `source`, a media drill's source read from its start past its middle (by the primary,
 * the only consumer): a transcode under way.
 */
export const EVENT_KINDS = ['checkpoint', 'source'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
/**
 * A string checked rather than an enum: a scenario's `at` is a number or this object, and only a
 * failed check (not a wrong type) lets the union name this field when it is wrong.
 */
const eventKind = z
  .string()
  .refine(
    (v) => (EVENT_KINDS as readonly string[]).includes(v),
    `must be one of: ${EVENT_KINDS.join(', ')}`,
  ) as unknown as z.ZodType<EventKind, string>;

/**
 * An event a fault may wait for instead of a scenario time, named by `after`: the `count`-th
 * such event of `node` (`checkpoint`: a checkpoint it writes; with `stages`, only one recording
 * that many stages done). `node` is resolved when the run starts (`primary`: node-1, the
 * bootstrap's holder). One schema for every kind, so that an error names the field at fault.
 */
export const eventAtSchema = z.strictObject({
  after: eventKind,
  node: nodeTarget,
  stages: z.number().int().min(0).max(MAX_STAGES).optional(),
  /** `source` only: a read of this episode (from 1). */
  episode: z.number().int().min(1).max(20).optional(),
  count: z.number().int().min(1).max(10_000).default(1),
});
export type EventAt = z.output<typeof eventAtSchema>;

/** Something the drill saw on the wire that a fault may wait for, with the node (access key) that did it. */
export interface DrillEvent {
  kind: EventAt['after'];
  node: string;
  stages: number;
  episode?: number;
}

/** A fault waiting for its event: `seen` matching events so far. */
export interface Pending {
  fault: number;
  kind: string;
  at: EventAt;
  /** `at.node` as resolved when the run started. */
  node: string;
  seen: number;
}

export const matches = (at: EventAt, node: string, e: DrillEvent): boolean =>
  e.kind === at.after &&
  e.node === node &&
  (at.stages === undefined || e.stages === at.stages) &&
  (at.episode === undefined || e.episode === at.episode);

const ordinal = (n: number): string => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
};

/** The event in words: `the 1st checkpoint of node-1 with 1 stage(s) done`. */
export const describeEvent = (at: EventAt, node: string): string => {
  const nth = ordinal(at.count);
  const source = at.episode === undefined ? 'a source' : `ep-${at.episode}`;
  if (at.after === 'source') return `${node} read ${source} past its middle (${nth} time)`;
  return `the ${nth} ${at.after} of ${node}${at.stages === undefined ? '' : ` with ${at.stages} stage(s) done`}`;
};

/**
 * One event seen: every pending fault it matches counts it, and those that reach their count
 * fire now (once). Pure.
 */
export const onEvent = (pending: readonly Pending[], e: DrillEvent): { pending: Pending[]; fire: Pending[] } => {
  const counted = pending.map((p) => (matches(p.at, p.node, e) ? { ...p, seen: p.seen + 1 } : p));
  return { pending: counted.filter((p) => p.seen < p.at.count), fire: counted.filter((p) => p.seen >= p.at.count) };
};

/** A fault that never fired, and why: it fails the drill. */
export interface Unfired {
  fault: number;
  kind: string;
  reason: string;
}

/** Why each fault still pending when the run's `seconds` were over never fired. */
export const unfiredReasons = (pending: readonly Pending[], seconds: number): Unfired[] =>
  pending.map((p) => ({
    fault: p.fault,
    kind: p.kind,
    reason:
      `faults.${p.fault} (${p.kind}) never fired: ${describeEvent(p.at, p.node)} ` +
      `did not come within ${seconds} s (${p.seen} of ${p.at.count} seen)`,
  }));
