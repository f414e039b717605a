import { mono } from './clock';

/**
 * A task repeated every `interval` ms, rescheduled with setTimeout in `finally` (never
 * setInterval): a slow round delays the next one instead of piling up. The period is kept
 * against the round's start on the monotonic clock, so rounds do not drift and a step of the
 * wall clock changes no interval. `interval` may instead be a function, asked after each
 * round how long to wait from now (a lease loop that must wake when an expiry falls due).
 */
export class Loop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly interval: number | (() => number),
    private readonly body: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly clock: () => number = mono,
  ) {}

  start(delayMs = 0): void {
    this.schedule(delayMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = this.clock();
      this.running = this.body()
        .catch(this.onError)
        .finally(() => {
          this.running = undefined;
          // A function says how long from now; a fixed period counts from the round's start.
          const delay = typeof this.interval === 'number' ? this.interval - (this.clock() - started) : this.interval();
          this.schedule(Math.max(0, delay));
        });
    }, delayMs);
  }

  /** Stops scheduling and waits for a round in progress. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
