/**
 * A task repeated every `intervalMs`, rescheduled with setTimeout in `finally` (never
 * setInterval): a slow round delays the next one instead of piling up. The period is kept
 * against the start time so rounds do not drift.
 */
export class Loop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly body: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(delayMs = 0): void {
    this.schedule(delayMs);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.running = this.body()
        .catch(this.onError)
        .finally(() => {
          this.running = undefined;
          this.schedule(Math.max(0, this.intervalMs - (Date.now() - started)));
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
