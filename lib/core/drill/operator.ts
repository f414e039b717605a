import { z } from 'zod';
import { nodeTarget } from './trigger';

/**
 * An operator's command in a scenario, run by the drill at scenario second `at` as `fleet pause`,
 * `resume`, `cordon NODE` or `uncordon NODE` would: planned maintenance meeting a fault.
 */
export const operatorActionSchema = z.discriminatedUnion('action', [
  /** `for`: the pause's expiry, in scenario seconds; without it, until a `resume`. */
  z.strictObject({ at: z.number().min(0), action: z.literal('pause'), for: z.number().positive().optional() }),
  z.strictObject({ at: z.number().min(0), action: z.literal('resume') }),
  z.strictObject({ at: z.number().min(0), action: z.literal('cordon'), target: nodeTarget }),
  z.strictObject({ at: z.number().min(0), action: z.literal('uncordon'), target: nodeTarget }),
]);
export type OperatorAction = z.output<typeof operatorActionSchema>;
