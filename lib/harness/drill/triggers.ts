import {
  onEvent,
  unfiredReasons,
  type DrillEvent,
  type EventAt,
  type Pending,
  type Unfired,
} from '../../core/drill/trigger';

/**
 * The faults of a run that wait for an event instead of a time (`at: { after: … }`): the recorder
 * tells it what it sees, and each fault fires right after its event, once. When the run's time is
 * over nothing fires any more, and the faults that never did are named (a failed drill).
 */
export class EventTriggers {
  private pending: Pending[] = [];
  private readonly fire = new Map<number, () => void>();
  private closed = false;

  constructor(private readonly onError: (fault: number, error: unknown) => void) {}

  /** Fault number `fault` (its index in the scenario) fires on `at`, whose node is `node` (resolved). */
  add(fault: number, kind: string, at: EventAt, node: string, fire: () => void): void {
    this.pending.push({ fault, kind, at, node, seen: 0 });
    this.fire.set(fault, fire);
  }

  /** Something the recorder saw on the wire. */
  saw(event: DrillEvent): void {
    if (this.closed || this.pending.length === 0) return;
    const out = onEvent(this.pending, event);
    this.pending = out.pending;
    for (const p of out.fire) {
      // It runs inside the cloud's answer to the write, which must not fail because of it.
      try {
        this.fire.get(p.fault)?.();
      } catch (error) {
        this.onError(p.fault, error);
      }
    }
  }

  /** The run's `seconds` are over: nothing fires from now on; the faults that never did, and why. */
  close(seconds: number): Unfired[] {
    this.closed = true;
    return unfiredReasons(this.pending, seconds);
  }
}
