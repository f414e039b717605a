import { mono } from '../runtime/clock';

/** What the hang check needs of a running task. */
export interface Watched {
  abort: AbortController;
  /** Monotonic ms when its stage last did work. */
  lastProgress: number;
  /** Its stage's own limit (the stage's `hangSeconds`), when it has one. */
  hangMs?: number;
}

/**
 * Finds tasks whose stage did no work for `limitMs`. Checked every tick; time the worker itself
 * did not run (a tick later than two periods: it was stopped, or starved) does not count against
 * its stages, so a frozen worker that thaws finds no hung stage, only lost time.
 */
export class HangWatch {
  private last: number | null = null;

  constructor(
    private readonly tickMs: number,
    private readonly limitMs: number,
  ) {}

  /** The tasks hung now, each with how long its stage did no work (ms). */
  check<T extends Watched>(running: Iterable<T>, now = mono()): { run: T; idleMs: number }[] {
    const paused = this.last === null ? 0 : now - this.last - 2 * this.tickMs;
    this.last = now;
    const hung: { run: T; idleMs: number }[] = [];
    for (const r of running) {
      if (paused > 0) r.lastProgress += paused;
      if (!r.abort.signal.aborted && now - r.lastProgress >= (r.hangMs ?? this.limitMs))
        hung.push({ run: r, idleMs: now - r.lastProgress });
    }
    return hung;
  }
}
