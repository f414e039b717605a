import type { Config } from '../lib/core/config';
import { CorruptObjectError, describeError, lostRace } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import {
  applyWrite,
  expiresAt,
  initialLease,
  observeLeader,
  observeFailure,
  planSync,
  release,
  releaseAt,
  renewalDueAt,
  resign,
  roleOf,
  type LeaseIntent,
  type LeaseState,
  type LeaseTiming,
} from '../lib/core/fleet/lease';
import { maintenanceSchema, promotionHeld } from '../lib/core/fleet/maintenance';
import { withoutRequest } from '../lib/core/fleet/switchover';
import { leaderSchema, type Leader } from '../lib/core/schemas';
import { z } from 'zod';
import type { StateStore } from '../lib/aws/state-store';
import { bootId } from './runtime/boot';
import { mono } from './runtime/clock';
import type { Logger } from '../lib/log';
import { rolePath, writeJsonAtomic, type RoleFile } from './registry';

export interface LeaseKeeperDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  log: Logger;
  /** Is this node's worker alive (may it take the role)? */
  ready: () => boolean;
  /** Can it reach the stores its work needs? One that cannot takes a lapsed lease only after every node that can. */
  reachable?: () => boolean;
  clock?: () => number;
  /** Told when this node's role changes (the agent pokes the watchdog when it becomes primary). */
  onRoleChange?: (role: RoleFile, before: RoleFile) => void;
  /**
   * Told once per damaged version of `leader.json` found by a read: only the watchdog rebuilds
   * it, and a primary that cannot renew fences within a lease, so the agent pokes it at once.
   */
  onDamaged?: (detail: string) => void;
  /** Told of each write that lost its CAS race (a node-side metric). */
  onRaced?: () => void;
}

/**
 * The agent's side of the lease (lib/core/fleet/lease.ts does the deciding), on its own loop every
 * `leaseRenewSeconds`: the primary renews by CAS against the version it wrote last (no read
 * first); a standby reads the record, takes it over once it expired by this node's own clock,
 * and a new primary waits out its handover. The role file tells the worker what it may do and
 * until when. Nothing here waits for peer-sync.
 */
/** The one part of the watchdog's state a node reads, and only when it would take the role. */
const maintenanceOnly = z.object({ maintenance: maintenanceSchema.optional() });

export class LeaseKeeper {
  private state: LeaseState;
  private role: RoleFile;
  private readonly timing: LeaseTiming;
  private readonly clock: () => number;
  /** When the last successful read of the record came back (this node's clock). */
  private lastLook: number | null = null;
  /** Send time of this node's last write of the record, landed or not. */
  private lastSentAt: number | null = null;
  /** The ETag of the damaged version last reported (each is reported once). */
  private damaged: string | null = null;
  /** The last round's takeover was held back (maintenance): the next one waits a whole read period. */
  private held = false;
  /** A switchover drains this primary (agent/switchover.ts): the role file tells the worker. */
  private draining = false;
  /** The switchover request the next renewal removes from the record (dropped: stale, expired, target gone). */
  private dropping: string | null = null;

  constructor(private readonly deps: LeaseKeeperDeps) {
    this.clock = deps.clock ?? mono;
    this.state = initialLease(this.clock());
    this.timing = { renewMs: deps.config.leaseRenewSeconds * 1000, expiryMs: deps.config.leaseExpirySeconds * 1000 };
    this.role = { role: 'standby', epoch: 0, validUntil: 0, boot: bootId() };
  }

  get current(): RoleFile {
    return this.role;
  }

  /** Position among the standbys by priority: the best tries first, one that cannot reach its stores last. */
  private rank(): number {
    const { nodes, nodeName } = this.deps.config;
    const others = nodes
      .filter((n) => n.name !== this.state.leader?.primary)
      .sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
    // One that gave the role up, or cannot reach its stores, comes after every node that can work.
    const behind = this.deps.reachable?.() === false || this.state.resigned ? nodes.length : 0;
    return (
      Math.max(
        0,
        others.findIndex((n) => n.name === nodeName),
      ) + behind
    );
  }

  private isPrimary(): boolean {
    return this.state.leader?.primary === this.deps.config.nodeName && this.state.etag !== null && !this.state.resigned;
  }

  /** The record as this node last saw or wrote it. */
  get leader(): Leader | null {
    return this.state.leader;
  }

  /** Is this node's own renewal due (a switchover's quicker rounds must not renew more often)? */
  renewalDue(): boolean {
    return !this.isPrimary() || this.clock() >= renewalDueAt(this.state.renewOkAt, this.lastSentAt, this.timing);
  }

  /** Starts or ends a switchover's drain; the worker reads it from the role file. */
  async drain(on: boolean): Promise<RoleFile> {
    this.draining = on;
    return this.publish();
  }

  /** The next renewal removes request `id` from the record. */
  drop(id: string): void {
    this.dropping = id;
  }

  /** Writes the next epoch naming a switchover's target, by CAS on the version this primary holds. */
  async handOver(next: Leader): Promise<boolean> {
    if (!this.isPrimary()) return false;
    await this.write({ kind: 'handover', next, etag: this.state.etag });
    const done = this.state.leader?.epoch === next.epoch && this.state.leader.primary === next.primary;
    // Still draining when the write did not land: the worker takes nothing until the next try.
    if (done) this.draining = false;
    await this.publish();
    return done;
  }

  /** Gives the role up: fenced at once, no more renewals; the lease lapses to a standby (lease.ts `resign`). */
  async resign(): Promise<RoleFile> {
    if (!this.isPrimary()) return this.role;
    this.state = resign(this.state);
    this.deps.log.warn({ epoch: this.state.leader?.epoch }, 'stepping down: the lease is left to lapse');
    return this.publish();
  }

  /** Reads the record (If-None-Match: a 304 when it did not change) and folds what it found. */
  private async look(): Promise<boolean> {
    const started = this.clock();
    try {
      const got = await this.deps.store.readIfChanged(KEYS.leader, leaderSchema, this.state.etag);
      const now = this.clock();
      // A read that came late (this process stalled, or was frozen) or took long (retries while S3
      // was away): what happened before it was not watched, so it cannot count as silence.
      const late = this.lastLook !== null && started - this.lastLook > 1.5 * this.timing.renewMs;
      if (late || now - started > this.timing.renewMs / 2) this.state = observeFailure(this.state, started);
      this.lastLook = now;
      if (got === null) this.state = observeLeader(this.deps.config.nodeName, this.state, null, null, now);
      else if (got.changed) this.state = observeLeader(this.deps.config.nodeName, this.state, got.value, got.etag, now);
      else this.state = observeLeader(this.deps.config.nodeName, this.state, this.state.leader, this.state.etag, now);
      return true;
    } catch (error) {
      this.state = observeFailure(this.state, this.clock());
      this.deps.log.warn({ err: describeError(error) }, 'leader record unreadable this round');
      if (error instanceof CorruptObjectError && error.etag !== this.damaged) {
        this.damaged = error.etag;
        this.deps.onDamaged?.(error.message);
      }
      return false;
    }
  }

  /**
   * Why `node` (this one by default) may not take the role now: cordoned, or the fleet paused. Read
   * only before a takeover or a handover; one that cannot be read holds nothing back, so a dead
   * primary is still replaced.
   */
  async promotionHeld(node = this.deps.config.nodeName): Promise<string | null> {
    try {
      const got = await this.deps.store.read(KEYS.watchdogState, maintenanceOnly);
      return promotionHeld(got?.value.maintenance, node);
    } catch (error) {
      this.deps.log.warn({ err: describeError(error) }, 'maintenance unreadable: going ahead all the same');
      return null;
    }
  }

  /** Writes a renewal or a takeover by CAS; a lost race re-reads (and says so), other failures only wait. */
  private async write(intent: Exclude<LeaseIntent, { kind: 'none' }>): Promise<'raced' | 'done'> {
    const sentAt = this.clock();
    this.lastSentAt = sentAt;
    const { store } = this.deps;
    try {
      const etag =
        intent.etag === null
          ? await store.create(KEYS.leader, intent.next)
          : await store.replace(KEYS.leader, intent.next, intent.etag);
      this.state = applyWrite(this.deps.config.nodeName, this.state, intent, true, etag, sentAt, this.clock());
      if (intent.kind !== 'renew') this.deps.log.warn({ epoch: intent.next.epoch }, intent.next.reason);
    } catch (error) {
      if (lostRace(error)) {
        this.deps.onRaced?.();
        await this.look();
        return 'raced';
      }
      this.state = observeFailure(this.state, this.clock());
      this.deps.log.warn({ err: describeError(error), intent: intent.kind }, 'lease write failed');
    }
    return 'done';
  }

  /** One round: renew, or read and perhaps take over; then publish the role. Never throws for S3 trouble. */
  async round(): Promise<RoleFile> {
    const me = this.deps.config.nodeName;
    const seen = this.isPrimary() ? true : await this.look();
    this.state = release(this.state, this.clock(), this.timing);
    if (seen) {
      const plan = (): LeaseIntent => {
        const p = planSync(me, this.state, this.clock(), {
          timing: this.timing,
          rank: this.rank(),
          ready: this.deps.ready(),
        });
        // A request the primary dropped leaves the record with its renewal; another one stays.
        const drop = p.kind === 'renew' && p.next.switchover !== undefined && p.next.switchover.id === this.dropping;
        return drop ? { ...p, next: withoutRequest(p.next) } : p;
      };
      const intent = plan();
      const held = intent.kind === 'promote' ? await this.promotionHeld() : null;
      this.held = held !== null;
      if (held !== null) this.deps.log.warn({ held }, `the lease is free, but not taken: ${held}`);
      const outcome = intent.kind === 'none' || held !== null ? 'done' : await this.write(intent);
      // A renewal that lost its race to a record that still names this node in the same epoch
      // (the watchdog rebuilt a damaged leader.json) renews over what it just read at once: a
      // period later, a primary fenced by the damage would stay stopped a whole renewal longer.
      const racedRenewal = outcome === 'raced' && intent.kind === 'renew';
      if (racedRenewal && this.isPrimary() && this.state.leader?.epoch === intent.next.epoch) {
        const again = plan();
        if (again.kind === 'renew') await this.write(again);
      }
    }
    return this.publish();
  }

  /**
   * Until the next round: the primary renews a period after its last renewal was sent, so slow
   * answers never push its lease toward lapsing; a standby reads every three quarters of a period,
   * which bounds a takeover at expiry plus that (37.5 s at the defaults); sooner when an expiry or
   * a release falls due.
   */
  nextDelayMs(): number {
    const now = this.clock();
    const primary = this.isPrimary();
    const renewal = renewalDueAt(this.state.renewOkAt, this.lastSentAt, this.timing);
    const due = [primary ? renewal - now : (this.timing.renewMs * 3) / 4];
    const releasing = releaseAt(this.state, this.timing);
    if (releasing !== null && this.state.leader?.primary === this.deps.config.nodeName) due.push(releasing - now);
    if (!primary && this.deps.ready() && !this.held) {
      due.push(expiresAt(this.state, { timing: this.timing, rank: this.rank() }) - now);
    }
    return Math.max(0, Math.min(...due));
  }

  /** Recomputes the role by the clock (a lapsed lease fences) and writes it if it changed. */
  async publish(): Promise<RoleFile> {
    // A handover's wait ends by the clock alone: no renewal need fall due first.
    this.state = release(this.state, this.clock(), this.timing);
    const role = roleOf(this.deps.config.nodeName, this.state, this.clock(), this.timing);
    const draining = this.draining && role.role === 'primary' ? { draining: true } : {};
    const next: RoleFile = { ...role, boot: bootId(), ...draining };
    const before = this.role;
    const changed = next.role !== before.role || next.epoch !== before.epoch || next.draining !== before.draining;
    if (changed) this.deps.log.info({ role: next.role, epoch: next.epoch }, 'role changed');
    if (changed || next.validUntil !== before.validUntil) {
      this.role = next;
      await writeJsonAtomic(rolePath(this.deps.config.dataDir), next);
    }
    if (changed) this.deps.onRoleChange?.(next, before);
    return this.role;
  }
}
