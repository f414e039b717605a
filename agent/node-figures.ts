import { mayConsume } from '../lib/core/fleet/lease';
import type { Sample } from '../lib/core/schemas';
import type { RoleFile } from './registry';
import { mono } from './runtime/clock';

/**
 * The agent's own figures for the node-side metrics (issue 14), carried on each sample so the
 * watchdog publishes them with the rest: no request is added. Times are this machine's monotonic
 * clock; nothing here is compared with another machine's.
 */
export class NodeFigures {
  /** When each lost CAS race happened, newest last, within the window. */
  private readonly conflicts: number[] = [];
  private syncMs: number | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly clock: () => number = mono,
  ) {}

  /** `n` CAS races lost (a manifest write or a lease write that met a newer version). */
  raced(n = 1): void {
    const t = this.clock();
    for (let i = 0; i < n; i++) this.conflicts.push(t);
  }

  /** A peer-sync round finished in `ms`. */
  synced(ms: number): void {
    this.syncMs = Math.max(0, ms);
  }

  /** The figures for a sample taken now under `role`. */
  of(role: RoleFile): Pick<Sample, 'syncMs' | 'casConflicts' | 'leaseLeftMs'> {
    const now = this.clock();
    while (this.conflicts.length > 0 && (this.conflicts[0] ?? now) <= now - this.windowMs) this.conflicts.shift();
    return {
      ...(this.syncMs === undefined ? {} : { syncMs: this.syncMs }),
      casConflicts: this.conflicts.length,
      ...(role.role === 'primary' && mayConsume(role, now) ? { leaseLeftMs: Math.max(0, role.validUntil - now) } : {}),
    };
  }
}
