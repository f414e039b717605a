/** Bounded retries with full jitter. Time and randomness come in, so tests control both. */
export interface RetryPolicy {
  /** Total attempts, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

export interface RetryDeps {
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/** Delay before retry number `attempt` (1-based): uniform in [0, min(cap, base·2^(attempt-1))]. */
export const backoffDelay = (attempt: number, policy: RetryPolicy, random: () => number): number =>
  Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1)));

/** Runs `fn` until it succeeds, `shouldRetry` says no, or attempts run out; rethrows the last error. */
export const retry = async <T>(
  fn: (attempt: number) => Promise<T>,
  shouldRetry: (error: unknown) => boolean,
  policy: RetryPolicy,
  deps: RetryDeps,
): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= policy.attempts || !shouldRetry(error)) throw error;
      await deps.sleep(backoffDelay(attempt, policy, deps.random));
    }
  }
};

export const realRetryDeps: RetryDeps = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};
