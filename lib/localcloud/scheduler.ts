/**
 * The local stand-in for EventBridge and S3 notifications: invokes the real watchdog handler
 * on a fixed schedule and whenever a heartbeat lands, as the deployed triggers do.
 */
export class LocalScheduler {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  invocations = 0;
  /** Drill faults: every trigger invokes this many copies at once; or none while paused. */
  copies = 1;
  paused = false;

  constructor(
    private readonly invoke: (event: unknown) => Promise<unknown>,
    private readonly periodMs: number,
    private readonly onError: (error: unknown) => void,
    /** Invocations allowed at once; more are dropped (the next trigger comes soon). */
    private readonly maxConcurrent = 4,
  ) {}

  private fire(event: unknown): void {
    if (this.stopped || this.paused) return;
    for (let i = 0; i < this.copies; i++) {
      if (this.inFlight.size >= this.maxConcurrent * this.copies) return;
      this.invocations++;
      const run = this.invoke(event)
        .then(() => undefined, this.onError)
        .finally(() => this.inFlight.delete(run));
      this.inFlight.add(run);
    }
  }

  /** An S3 ObjectCreated notification for a heartbeat key. */
  heartbeat(bucket: string, fullKey: string): void {
    this.fire({ Records: [{ eventSource: 'aws:s3', eventName: 'ObjectCreated:Put', s3: { bucket: { name: bucket }, object: { key: fullKey } } }] });
  }

  start(): void {
    const tick = (): void => {
      this.timer = setTimeout(() => {
        this.fire({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
        tick();
      }, this.periodMs);
    };
    tick();
  }

  /** Stops triggering and waits for invocations under way. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }
}
