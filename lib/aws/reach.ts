import { ThrottledError, TransientError, UnreachableError } from '../core/errors';
import type { StoreName } from '../core/schemas';
import { toFleetError } from './errors';

/** The outcome of a request as reachability sees it: the store answered, failed to, or neither (an abort of ours). */
type Outcome = 'answered' | 'failed' | 'neither';

/**
 * Whether the store answered a request: any answer, even a refusal (404, 412, a skewed signature),
 * proves it reachable; no answer, a 5xx or throttling does not. An abort this process asked for
 * says nothing either way.
 */
export const outcomeOf = (error: unknown): Outcome => {
  if ((error as { name?: string }).name === 'AbortError') return 'neither';
  const e = toFleetError(error, 'request');
  const unanswered = e instanceof UnreachableError || e instanceof ThrottledError || e.constructor === TransientError;
  return unanswered ? 'failed' : 'answered';
};

/**
 * Whether this process reaches each store, by the outcome of its requests (every request of the
 * clients a `ClientFactory` built with it): a store is unreachable from its first failed request
 * after the last answered one, and reachable again at the next answer. Timed by `clock`.
 */
export class Reach {
  private readonly downSince = new Map<StoreName, number>();

  constructor(private readonly clock: () => number) {}

  record(store: StoreName, outcome: Outcome): void {
    if (outcome === 'answered') this.downSince.delete(store);
    else if (outcome === 'failed' && !this.downSince.has(store)) this.downSince.set(store, this.clock());
  }

  /** The stores whose last request went unanswered, in a fixed order. */
  unreachable(): StoreName[] {
    return (['s3', 'sqs', 'dynamodb'] as const).filter((s) => this.downSince.has(s));
  }

  /** How long `store` has been unreachable (0 when it is not). */
  downFor(store: StoreName): number {
    const since = this.downSince.get(store);
    return since === undefined ? 0 : this.clock() - since;
  }
}
