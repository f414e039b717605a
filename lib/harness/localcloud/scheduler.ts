import { AsyncLocalStorage } from 'node:async_hooks';
import type { Behaviour } from './behaviour';
import type { Chance } from './chance';

/** How `stop` ends a dead invocation without reporting it: the drill is over. */
const STOPPED = new Error('the local scheduler stopped');

/** Why an invocation happened, for counting. */
export type TriggerKind = 'schedule' | 's3' | 'direct' | 'retry';

/**
 * The local stand-in for EventBridge and Lambda's asynchronous invocation: invokes the real
 * watchdog handler on its schedule and for every event handed to `enqueue` (S3 notifications,
 * the agents' direct invokes), the way AWS does (docs/aws-behaviour.md: lambdaAsync,
 * eventBridgeSchedule): events wait in a queue, a few arrive twice, one that throws is retried
 * a minute and then two minutes later, and each scheduled run comes somewhere within its period.
 */
export class LocalScheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  /** The invocation whose code is running, so that `hang` knows which one died. */
  private readonly current = new AsyncLocalStorage<{ died: () => void }>();
  /** Ends, now, each invocation that died and is waiting out its timeout (`stop` calls them). */
  private readonly dead = new Set<() => void>();
  private stopped = false;
  invocations = 0;
  readonly byTrigger: Record<TriggerKind, number> = { schedule: 0, s3: 0, direct: 0, retry: 0 };
  /** Drill faults: every trigger invokes this many copies at once; or none while paused. */
  copies = 1;
  paused = false;

  constructor(
    private readonly invoke: (event: unknown) => Promise<unknown>,
    private readonly periodMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly behaviour: Pick<Behaviour, 'lambdaAsync' | 'eventBridgeSchedule'>,
    private readonly chance: Chance,
    /** Invocations allowed at once; more wait in the queue (Lambda retries throttled events). */
    private readonly maxConcurrent = 4,
    /** The function's timeout (wall ms): Lambda ends an invocation that outlives it. */
    private readonly timeoutMs = Infinity,
  ) {}

  /**
   * Called from inside an invocation that can go no further (a drill's watchdog-crash): never
   * settles, so no later line of it runs, and the invocation is ended at the function's timeout
   * and retried like one that threw. Only such a one is ended: a run that is merely slow here
   * cannot be stopped, and retrying it beside itself would be a duplicate Lambda never makes.
   */
  hang(): Promise<never> {
    this.current.getStore()?.died();
    return new Promise<never>(() => undefined);
  }

  /** What ends an invocation: its own settling, or its timeout once it died (`hang`). */
  private ending(startedAt: number): { ended: Promise<never>; died: () => void; clear: () => void } {
    let timer: NodeJS.Timeout | undefined;
    let end: (error: Error) => void = () => undefined;
    const ended = new Promise<never>((_, reject) => (end = reject));
    // Never unhandled: the invocation's own settling may have won the race.
    ended.catch(() => undefined);
    const timedOut = (): void => end(new Error('Task timed out: the invocation outlived the function timeout'));
    const clear = (): void => {
      clearTimeout(timer);
      this.dead.delete(stopped);
    };
    const stopped = (): void => end(STOPPED);
    const died = (): void => {
      if (this.dead.has(stopped)) return;
      this.dead.add(stopped);
      const left = startedAt + this.timeoutMs - Date.now();
      if (left !== Infinity) timer = setTimeout(timedOut, Math.max(0, left));
    };
    return { ended, died, clear };
  }

  private later(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  /** Runs the handler now; a throw is retried after each of `retryDelaysMs`. */
  private run(event: unknown, kind: TriggerKind, attempt: number): void {
    if (this.stopped || this.paused) return;
    if (this.inFlight.size >= this.maxConcurrent * this.copies) {
      this.later(Math.max(1, this.behaviour.lambdaAsync.queueMaxMs), () => this.run(event, kind, attempt));
      return;
    }
    this.invocations++;
    this.byTrigger[attempt > 0 ? 'retry' : kind]++;
    const { ended, died, clear } = this.ending(Date.now());
    const run = Promise.race([this.current.run({ died }, () => this.invoke(event)), ended])
      .then(
        () => undefined,
        (error: unknown) => {
          if (error === STOPPED) return;
          this.onError(error);
          const retries = this.behaviour.lambdaAsync.on ? this.behaviour.lambdaAsync.retryDelaysMs : [];
          const delay = retries[attempt];
          if (delay !== undefined) this.later(delay, () => this.run(event, kind, attempt + 1));
        },
      )
      .finally(() => {
        clear();
        this.inFlight.delete(run);
      });
    this.inFlight.add(run);
  }

  /** An asynchronous invocation: queued, perhaps delivered twice. */
  enqueue(event: unknown, kind: Exclude<TriggerKind, 'retry'>): void {
    if (this.stopped) return;
    const a = this.behaviour.lambdaAsync;
    const deliveries = a.on && this.chance.chance(a.duplicateRate) ? 2 : 1;
    // The duplicate-watchdog fault runs its copies at the same instant, racing for real.
    const all = (): void => {
      for (let copy = 0; copy < this.copies; copy++) this.run(event, kind, 0);
    };
    for (let d = 0; d < deliveries; d++) {
      if (!a.on) all();
      else this.later(this.chance.between(a.queueMinMs, a.queueMaxMs), all);
    }
  }

  /** An S3 ObjectCreated notification for a heartbeat key, as S3 hands it to Lambda. */
  notification(bucket: string, fullKey: string): void {
    this.enqueue(
      {
        Records: [
          {
            eventSource: 'aws:s3',
            eventName: 'ObjectCreated:Put',
            s3: { bucket: { name: bucket }, object: { key: fullKey } },
          },
        ],
      },
      's3',
    );
  }

  /**
   * The rate schedule: one run per period, at a random point within it (or on its boundary when
   * the behaviour is off).
   */
  start(): void {
    const e = this.behaviour.eventBridgeSchedule;
    const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
    const period = (k: number): void => {
      const offset = e.on
        ? this.chance.between(0, this.periodMs) + this.chance.between(0, e.targetDelayMaxMs)
        : this.periodMs;
      this.later(offset, () => {
        for (let copy = 0; copy < this.copies; copy++) this.run(scheduled, 'schedule', 0);
      });
      this.later(this.periodMs, () => period(k + 1));
    };
    period(0);
  }

  /** Stops triggering and waits for invocations under way. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    // A dead invocation would otherwise keep the drill waiting for its timeout.
    for (const end of [...this.dead]) end();
    await Promise.allSettled([...this.inFlight]);
  }
}
