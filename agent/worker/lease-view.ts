import { FencedError } from '../../lib/core/errors';
import { mayConsume } from '../../lib/core/fleet/lease';
import { bootId } from '../runtime/boot';
import { mono } from '../runtime/clock';
import { readJsonFile, readJsonFileSync, roleFileSchema, rolePath, type RoleFile } from '../registry';

const NO_ROLE: RoleFile = { role: 'standby', epoch: 0, validUntil: 0, boot: '' };

/**
 * The worker's view of its lease: the agent's last word on the role (`role.json`), re-read every
 * watch tick and before every receive. The copy in memory only ever lags behind the file
 * towards "not allowed", and the file decides before anything is refused.
 */
export class LeaseView {
  private role: RoleFile = NO_ROLE;

  constructor(
    private readonly dataDir: string,
    private readonly nodeName: string,
    /** How long past its end a request sent under the lease may still take: less than the lease's margin. */
    private readonly graceMs = 0,
  ) {}

  /** May this worker act now? The agent's word, from this machine's boot, still valid by the monotonic clock. */
  mayAct(): boolean {
    return this.role.boot === bootId() && mayConsume(this.role, mono());
  }

  /**
   * Throws FencedError unless the worker may act: called right before every write and
   * acknowledgement. A copy that lapsed is checked against the file first: a worker that was
   * stopped (frozen) finds its copy lapsed while its agent kept the lease, and a live lease must
   * not drop a task.
   */
  guard(): void {
    if (this.mayAct()) return;
    try {
      this.role = readJsonFileSync(rolePath(this.dataDir), roleFileSchema) ?? NO_ROLE;
    } catch {
      this.role = NO_ROLE;
    }
    if (!this.mayAct())
      throw new FencedError(
        `${this.nodeName}: no valid lease (role ${this.role.role}, epoch ${this.role.epoch}): not acting`,
      );
  }

  /**
   * Aborts a grace after the lease this worker acts under ends: a request sent under it, and the
   * SDK's retries of it, are answered or abandoned before another node can take the role over
   * (a renewal period after the fence). A slow path's answer may still come within the grace.
   */
  deadline(): AbortSignal {
    return AbortSignal.timeout(
      this.mayAct() ? Math.max(0, Math.ceil(this.role.validUntil + this.graceMs - mono())) : 0,
    );
  }

  /** Re-reads the file: the role this worker may consume under now, or null. */
  async allowed(): Promise<RoleFile | null> {
    this.role = (await readJsonFile(rolePath(this.dataDir), roleFileSchema).catch(() => null)) ?? NO_ROLE;
    return this.mayAct() ? this.role : null;
  }
}
