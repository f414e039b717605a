import type { Config } from '../lib/core/config';
import { describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import {
  handoverRecord,
  observeAck,
  observeRequest,
  planHandover,
  startDrain,
  targetOf,
  type Handing,
  type HandingTiming,
} from '../lib/core/fleet/switchover';
import { beatSchema, type Beat } from '../lib/core/schemas';
import type { StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';
import type { LeaseKeeper } from './lease-keeper';
import { mono } from './runtime/clock';
import { readJsonFile, registryPath, registrySchema } from './registry';

export interface SwitchoverDeps {
  config: Config & { nodeName: string };
  store: Pick<StateStore, 'read' | 'put'>;
  log: Logger;
  lease: LeaseKeeper;
  clock?: () => number;
  /** The beat this node would write now (its newest sample's number), without an answer. */
  beat: () => Beat | null;
  /** Is this node's worker alive? Only then, and not cordoned nor paused, does it answer as a target. */
  ready: () => boolean;
}

/**
 * The agent's side of `fleet switchover` (the rules are lib/core/fleet/switchover.ts). While a
 * request is on the record its two nodes look every sixteenth of a renewal period: the primary reads
 * its worker's registry and the target's beat, drains and hands over; the target answers in its
 * beat and, reading the record that often, takes the role the moment it is handed over.
 */
export class SwitchoverAgent {
  private handing: Handing | null = null;
  /** The request this node answers as the target, and its count. */
  private answering: { id: string; n: number } | null = null;
  /** The request dropped (the record loses it at the next renewal): not acted on again. */
  private dropped: string | null = null;
  /** The request this node, as its target, may not take (cordoned, paused, no worker): asked once. */
  private refused: string | null = null;

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

  /** One look, after the lease round: the primary's step, or the target's answer. */
  async tick(): Promise<void> {
    const { lease } = this.deps;
    if (lease.current.role === 'primary') await this.asPrimary();
    else {
      if (this.handing !== null) await this.settle(null);
      await this.asTarget();
    }
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
    let h = observeRequest(me, live, this.handing, clock());
    if (h !== null) h = observeAck(h, await this.answerOf(h.to), clock());
    const drained = (h?.drainFrom ?? null) !== null && (await this.drained(leader?.epoch ?? -1));
    const step = planHandover(me, live, h, clock(), this.timing, drained);
    switch (step.kind) {
      case 'none':
      case 'wait':
        return this.settle(h);
      case 'drain':
        if (h !== null && h.drainFrom === null) {
          log.info({ id: h.id, to: h.to }, 'switchover: the target answered; draining to checkpoints');
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

  /** The target's answer to request `to`'s beat, or null when it has none (or it is unreadable). */
  private async answerOf(to: string): Promise<{ id: string; n: number } | null> {
    try {
      return (await this.deps.store.read(KEYS.beat(to), beatSchema))?.value.accepts ?? null;
    } catch (error) {
      this.deps.log.warn({ err: describeError(error), to }, 'switchover: target beat unreadable this look');
      return null;
    }
  }

  /** The worker says its drain is done under `epoch`: no task in hand, no receive open. */
  private async drained(epoch: number): Promise<boolean> {
    const reg = await readJsonFile(registryPath(this.deps.config.dataDir), registrySchema).catch(() => null);
    return reg !== null && reg.drained === epoch && reg.inFlight.length === 0;
  }

  /** As the target: answer in the beat at each look while willing, so the primary sees this node alive. */
  private async asTarget(): Promise<void> {
    const req = targetOf(this.deps.config.nodeName, this.deps.lease.leader);
    if (req === null) {
      this.answering = null;
      return;
    }
    if (this.answering?.id !== req.id) {
      if (this.refused === req.id) return;
      const held = this.deps.ready() ? await this.deps.lease.promotionHeld() : 'no live worker process';
      if (held !== null) {
        this.refused = req.id;
        this.deps.log.warn({ id: req.id, held }, `switchover not answered: ${held}`);
        return;
      }
      this.answering = { id: req.id, n: 0 };
    }
    const beat = this.deps.beat();
    if (beat === null) return;
    this.answering = { ...this.answering, n: this.answering.n + 1 };
    await this.deps.store
      .put(KEYS.beat(this.deps.config.nodeName), { ...beat, accepts: this.answering })
      .catch((error: unknown) => this.deps.log.warn({ err: describeError(error) }, 'switchover answer not written'));
  }
}
