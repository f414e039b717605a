import type { Config } from '../lib/core/config';
import { ConflictError, describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import { applyWrite, initialLease, observe, planSync, release, roleOf, type LeaseState, type LeaseTiming } from '../lib/core/lease';
import { leaderSchema } from '../lib/core/schemas';
import type { StateStore } from '../lib/aws/state-store';
import { bootId } from '../lib/boot';
import { mono } from '../lib/clock';
import type { Logger } from '../lib/log';
import { rolePath, writeJsonAtomic, type RoleFile } from './registry';

export interface LeaseKeeperDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  log: Logger;
  /** Is this node's worker alive (may it take the role)? */
  ready: () => boolean;
  clock?: () => number;
}

/**
 * The agent's side of the lease (lib/core/lease.ts does the deciding): each sync it reads
 * `leader.json`, renews the lease if this node holds it, takes it over if it expired by this
 * node's own clock, and tells the worker through the role file what it may do and until when.
 */
export class LeaseKeeper {
  private state: LeaseState;
  private role: RoleFile;
  private readonly timing: LeaseTiming;
  private readonly clock: () => number;

  constructor(private readonly deps: LeaseKeeperDeps) {
    this.clock = deps.clock ?? mono;
    this.state = initialLease(this.clock());
    this.timing = { syncMs: deps.config.syncIntervalSeconds * 1000, expiryMs: deps.config.leaseExpirySeconds * 1000 };
    this.role = { role: 'standby', epoch: 0, validUntil: 0, boot: bootId() };
  }

  get current(): RoleFile {
    return this.role;
  }

  /** Position among the standbys by priority: the best standby tries first. */
  private rank(): number {
    const { nodes, nodeName } = this.deps.config;
    const others = nodes.filter((n) => n.name !== this.state.leader?.primary).sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
    return Math.max(0, others.findIndex((n) => n.name === nodeName));
  }

  /** One sync: read, renew or take over, publish the role. Never throws for S3 trouble. */
  async sync(): Promise<RoleFile> {
    const me = this.deps.config.nodeName;
    let readOk = false;
    try {
      const read = await this.deps.store.read(KEYS.leader, leaderSchema);
      this.state = observe(me, this.state, read?.value ?? null, read?.etag ?? null, this.clock());
      readOk = true;
    } catch (error) {
      this.deps.log.warn({ err: describeError(error) }, 'leader record unreadable this sync');
    }
    this.state = release(this.state, this.clock(), this.timing);
    if (readOk) {
      const intent = planSync(me, this.state, this.clock(), { timing: this.timing, rank: this.rank(), ready: this.deps.ready() });
      if (intent.kind !== 'none') {
        const sentAt = this.clock();
        let etag: string | null = null;
        try {
          etag = intent.etag === null ? await this.deps.store.create(KEYS.leader, intent.next) : await this.deps.store.replace(KEYS.leader, intent.next, intent.etag);
        } catch (error) {
          if (!(error instanceof ConflictError)) this.deps.log.warn({ err: describeError(error), intent: intent.kind }, 'lease write failed');
        }
        this.state = applyWrite(me, this.state, intent, etag !== null, etag, sentAt, this.clock());
        if (intent.kind === 'promote' && etag !== null) this.deps.log.warn({ epoch: intent.next.epoch }, intent.next.reason);
      }
    }
    return this.publish();
  }

  /** Recomputes the role by the clock (a lapsed lease fences) and writes it if it changed. */
  async publish(): Promise<RoleFile> {
    const next: RoleFile = { ...roleOf(this.deps.config.nodeName, this.state, this.clock(), this.timing), boot: bootId() };
    const changed = next.role !== this.role.role || next.epoch !== this.role.epoch;
    if (changed) this.deps.log.info({ role: next.role, epoch: next.epoch }, 'role changed');
    if (changed || next.validUntil !== this.role.validUntil) {
      this.role = next;
      await writeJsonAtomic(rolePath(this.deps.config.dataDir), next);
    }
    return this.role;
  }
}
