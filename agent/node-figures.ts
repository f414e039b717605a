import type { Sample } from '../lib/core/schemas';
import type { RoleFile } from './registry';
import { mono } from './runtime/clock';

/**
 * The agent's own figures for the node-side metrics, carried on each sample so the
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

  /** A CAS race lost: a manifest write or a lease write met a newer version. */
  raced(): void {
    this.conflicts.push(this.clock());
  }

  /** A peer-sync round ended (done or failed) after `ms`. */
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
      // A primary whose lease lapsed says 0 (it is fencing itself) rather than going quiet.
      ...(role.role === 'primary' ? { leaseLeftMs: Math.max(0, role.validUntil - now) } : {}),
    };
  }
}
