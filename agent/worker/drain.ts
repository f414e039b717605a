import type { RoleFile } from '../registry';

/**
 * A switchover's drain of this worker, as the agent asks through the role file
 * (agent/switchover.ts): take no new message, and stop each running task after the checkpoint of
 * the stage it is in (a task in its last stage completes). A request cancelled meanwhile ends
 * it: tasks started afterwards run to their end again.
 */
export class Drain {
  private ctl = new AbortController();

  constructor(private readonly sigterm: AbortSignal) {}

  /** What a task attempt drains by: SIGTERM's drain, or this switchover's. */
  signal(): AbortSignal {
    return AbortSignal.any([this.sigterm, this.ctl.signal]);
  }

  get on(): boolean {
    return this.ctl.signal.aborted;
  }

  /**
   * Follows the agent's word (`started` runs when a drain begins) and returns the epoch whose drain
   * is done, when the worker is `idle` (no task in hand, no receive open), or null.
   */
  check(role: RoleFile | null, idle: () => boolean, started: () => void): number | null {
    const want = role?.draining === true;
    if (want && !this.ctl.signal.aborted) {
      this.ctl.abort();
      started();
    }
    if (!want && this.ctl.signal.aborted) this.ctl = new AbortController();
    return want && role !== null && idle() ? role.epoch : null;
  }
}
