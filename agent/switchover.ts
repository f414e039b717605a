import type { Config } from '../lib/core/config';
import {
  handoverRecord,
  observeRequest,
  planHandover,
  startDrain,
  targetOf,
  type Handing,
  type HandingTiming,
} from '../lib/core/fleet/switchover';
import type { Logger } from '../lib/log';
import type { LeaseKeeper } from './lease-keeper';
import { mono } from './runtime/clock';
import { readJsonFile, registryPath, registrySchema } from './registry';

export interface SwitchoverDeps {
  config: Config & { nodeName: string };
  log: Logger;
  lease: LeaseKeeper;
  clock?: () => number;
}

/**
 * The agent's side of `fleet switchover` (the rules are lib/core/fleet/switchover.ts). While a
 * request is on the record its two nodes look every sixteenth of a renewal period: the primary reads
 * its worker's registry, drains and hands over; the target, reading the record that often, takes
 * the role the moment it is handed over.
 */
export class SwitchoverAgent {
  private handing: Handing | null = null;
  /** The request dropped (the record loses it at the next renewal): not acted on again. */
  private dropped: string | null = null;

  private readonly clock: () => number;

  constructor(private readonly deps: SwitchoverDeps) {
    this.clock = deps.clock ?? mono;
  }

  private get timing(): HandingTiming {
    const c = this.deps.config;
    return {
      renewMs: c.leaseRenewSeconds * 1000,
      expiryMs: c.leaseExpirySeconds * 1000,
      // The same bound as a SIGTERM's drain: half the worker's stop timeout.
      drainMs: (c.workerStopTimeoutSeconds * 1000) / 2,
    };
  }

  /** A request on the record names this node, as primary or target: the lease loop looks faster. */
  get active(): boolean {
    const me = this.deps.config.nodeName;
    const leader = this.deps.lease.leader;
    const req = leader?.switchover;
    return req !== undefined && req.id !== this.dropped && (leader?.primary === me || targetOf(me, leader) !== null);
  }

  /** How long the lease loop may wait: a sixteenth of a renewal period while a request is active. */
  delayMs(): number {
    return this.active ? this.timing.renewMs / 16 : Infinity;
  }

  /** One look, after the lease round: the primary's step; a node no longer primary forgets its request. */
  async tick(): Promise<void> {
    if (this.deps.lease.current.role === 'primary') await this.asPrimary();
    else if (this.handing !== null) await this.settle(null);
  }

  private async settle(h: Handing | null): Promise<void> {
    if (this.handing !== null && this.handing.drainFrom !== null && (h?.drainFrom ?? null) === null) {
      await this.deps.lease.drain(false);
    }
    this.handing = h;
  }

  private async asPrimary(): Promise<void> {
    const { config, lease, log } = this.deps;
    const clock = this.clock;
    const me = config.nodeName;
    const leader = lease.leader;
    const live = leader?.switchover?.id === this.dropped ? null : leader;
    const h = observeRequest(me, live, this.handing, clock());
    const draining = h !== null && h.drainFrom !== null;
    const drained = draining && (await this.drained(leader?.epoch ?? -1));
    // Judged once, before the drain: a drop after the handover write was sent could leave two consumers.
    const held = h === null || draining ? null : await lease.promotionHeld(h.to);
    const step = planHandover(me, live, h, clock(), this.timing, drained, held);
    switch (step.kind) {
      case 'none':
      case 'wait':
        return this.settle(h);
      case 'drain':
        if (h !== null && h.drainFrom === null) {
          log.info({ id: h.id, to: h.to }, 'switchover: draining to checkpoints');
          this.handing = startDrain(h, clock());
          await lease.drain(true);
        } else this.handing = h;
        return;
      case 'drop':
        log.warn({ id: leader?.switchover?.id, why: step.why }, `switchover dropped: ${step.why}`);
        this.dropped = leader?.switchover?.id ?? null;
        if (this.dropped !== null) lease.drop(this.dropped);
        return this.settle(null);
      case 'hand-over': {
        if (leader === null) return;
        const next = handoverRecord(leader, me, step);
        const level = step.handover === 'immediate' ? 'info' : 'warn';
        log[level]({ id: h?.id, to: step.to, epoch: next.epoch, handover: step.handover }, next.reason);
        const done = await lease.handOver(next);
        if (done) this.handing = null;
        return;
      }
    }
  }

  /** The worker says its drain is done under `epoch`: no task in hand, no receive open. */
  private async drained(epoch: number): Promise<boolean> {
    const reg = await readJsonFile(registryPath(this.deps.config.dataDir), registrySchema).catch(() => null);
    return reg !== null && reg.drained === epoch && reg.inFlight.length === 0;
  }
}
