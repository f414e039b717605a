import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Config } from '../lib/core/config';
import { describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import { mayConsume } from '../lib/core/fleet/lease';
import { judgeSample } from '../lib/core/fleet/stall';
import type { Beat, Heartbeat, Sample } from '../lib/core/schemas';
import { Reach } from '../lib/aws/reach';
import { mono } from './runtime/clock';
import { serveHealth } from './runtime/health-server';
import type { AlertTopic } from '../lib/aws/alerts';
import type { TaskQueue } from '../lib/aws/queue';
import type { TriggerReason, WatchdogTrigger } from '../lib/aws/trigger';
import { alertFromNode } from './runtime/node-alerts';
import type { StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';
import { VERSION } from '../lib/version';
import { Loop } from './runtime/loop';
import { LeaseKeeper } from './lease-keeper';
import { NodeFigures } from './node-figures';
import { PeerSync, type RoundStats } from './peer-sync';
import { localTaskFeed } from './task-journal';
import { Sampler } from './sampler';
import { StepDown } from './step-down';
import { SwitchoverAgent } from './switchover';
import { heartbeatDue, newsOf, type Written } from './heartbeat-policy';

const STANDBY_SQS_PROBE_SYNCS = 4;

export interface AgentDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  queue: TaskQueue | null;
  log: Logger;
  /** This machine's wall clock. */
  now: () => number;
  instanceId?: string;
  /** Damage alerts; null without a topic. */
  alerts: AlertTopic | null;
  /** The watchdog, invoked directly on a failing sample or a role change; null when not configured. */
  trigger: WatchdogTrigger | null;
  /** Which stores this node reaches, by the outcome of this process's requests (absent: always). */
  reach?: Reach;
}

/**
 * The on-instance agent (`queen-fleet-peer-sync`), three loops that never wait for each other:
 * the lease (renew or watch `leader.json` every `leaseRenewSeconds`, tell the worker through
 * the role file whether it may consume), the sample (every sample interval: take a sample,
 * write a standby's beat and the heartbeat when due, poke the watchdog when the primary's
 * sample fails) and peer-sync (every sync interval: the task manifest). It also serves /healthz.
 */
export class Agent {
  private readonly boot = randomUUID();
  private readonly samples: Sample[] = [];
  private probedAt = -Infinity;
  private readonly lease: LeaseKeeper;
  private readonly peerSync: PeerSync;
  private readonly reach: Reach;
  /** Whether to give up the role for want of S3 (step-down.ts). */
  private readonly stepDown: StepDown;
  /** `fleet switchover`: the primary drains and hands over; the target reads the record often meanwhile. */
  private readonly switchover: SwitchoverAgent;
  private lastRound: RoundStats | null = null;
  private readonly figures: NodeFigures;
  /** Heartbeat writes that failed in a row: the next sample writes it again (heartbeat-policy.ts). */
  private unsent = 0;
  /** The last heartbeat written (heartbeat-policy.ts decides whether the next sample's is). */
  private written: Written | null = null;
  private readonly sampler: Sampler;
  private readonly sampleLoop: Loop;
  private readonly leaseLoop: Loop;
  private readonly syncLoop: Loop;
  private server: Server | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly deps: AgentDeps) {
    const c = deps.config;
    this.reach = deps.reach ?? new Reach(mono);
    const { store, log, alerts, now } = deps;
    this.stepDown = new StepDown({ config: c, store, reach: this.reach, log, alerts, now });
    this.figures = new NodeFigures(c.completionWindowSeconds * 1000);
    const ready = (): boolean => (this.samples.at(-1)?.workerProcesses ?? 0) > 0;
    this.lease = new LeaseKeeper({
      config: c,
      store,
      log,
      ready,
      // A node that cannot reach the stores its work needs takes a lapsed lease only after every node that can.
      reachable: () => !(this.samples.at(-1)?.unreachable ?? []).some((s) => s === 's3' || s === 'sqs'),
      // A node that became primary pokes the watchdog, so traffic follows the lease at once.
      onRoleChange: (role, before) => {
        if (role.role !== 'primary' || (before.role === 'primary' && before.epoch === role.epoch)) return;
        this.poke({ node: c.nodeName, reason: 'role', detail: `primary of epoch ${role.epoch}` });
      },
      // Only the watchdog rebuilds a damaged leader.json, and only while the primary still holds
      // its lease can it be named as the holder: waiting for its schedule could cost a failover.
      onDamaged: (detail) => this.poke({ node: c.nodeName, reason: 'leader-damaged', detail: detail.slice(0, 300) }),
      onRaced: () => this.figures.raced(),
    });
    const lease = this.lease;
    this.switchover = new SwitchoverAgent({ config: c, log, lease });
    this.peerSync = new PeerSync({
      store: deps.store,
      log: deps.log,
      now: deps.now,
      retentionMs: c.taskRetentionSeconds * 1000,
      localChanges: localTaskFeed(c.dataDir, deps.log),
      onRaced: () => this.figures.raced(),
      onCorrupt: (key, reason) => {
        const at = deps.now();
        void alertFromNode(deps.alerts, deps.log, {
          kind: 'MANIFEST_DAMAGED',
          node: c.nodeName,
          incidentId: `manifest-${key.replace(/\W+/g, '-')}-${at}`,
          epoch: this.lease.current.epoch,
          at,
          summary: `${key} was damaged (${reason}); copied aside and rebuilt.`,
        });
      },
    });
    this.sampler = new Sampler({
      dataDir: c.dataDir,
      completionWindowMs: c.completionWindowSeconds * 1000,
      now: deps.now,
      epoch: () => this.lease.current.epoch,
      mayConsume: () => mayConsume(this.lease.current, mono()),
      unreachable: () => this.reach.unreachable(),
      backlog: async () => {
        // Only the consuming node's backlog feeds the stall rule. A standby reads it every four sync
        // intervals (2 min) only to know it reaches SQS (its readiness), and reports none.
        const primary = this.lease.current.role === 'primary';
        const probe = mono() - this.probedAt >= STANDBY_SQS_PROBE_SYNCS * c.syncIntervalSeconds * 1000;
        if (deps.queue === null || (!primary && !probe)) return null;
        this.probedAt = mono();
        try {
          const b = await deps.queue.backlog();
          return primary ? b.visible + b.inFlight : null;
        } catch (error) {
          deps.log.warn({ err: describeError(error) }, 'queue backlog unavailable for this sample');
          return null;
        }
      },
    });
    const onError = (what: string) => (error: unknown) =>
      deps.log.error({ err: describeError(error) }, `${what} failed; next round retries`);
    this.sampleLoop = new Loop(c.sampleIntervalSeconds * 1000, () => this.sampleOnce(), onError('sample'));
    this.leaseLoop = new Loop(
      () => Math.min(this.lease.nextDelayMs(), this.switchover.delayMs()),
      () => this.leaseRound(),
      onError('lease'),
    );
    this.syncLoop = new Loop(c.syncIntervalSeconds * 1000, () => this.syncOnce(), onError('sync'));
  }

  /** One lease round; the primary then judges whether it must step down for want of S3. */
  private async leaseRound(): Promise<void> {
    // A switchover's quicker looks renew only when a renewal is due; a standby reads at each.
    const role = this.lease.renewalDue() ? await this.lease.round() : await this.lease.publish();
    if (role.role === 'primary') await this.stepDown.judge(role.epoch, () => this.lease.resign());
    await this.switchover.tick();
  }

  /** One peer-sync round of the task manifest. The lease has its own loop and never waits for this. */
  async syncOnce(): Promise<void> {
    const startedAt = mono();
    try {
      this.lastRound = await this.peerSync.round();
    } finally {
      this.figures.synced(mono() - startedAt);
    }
    this.deps.log.debug({ sync: this.lastRound }, 'peer-sync round');
  }

  /** Invokes the watchdog (asynchronously, at most a request per sample); a failure is only logged. */
  private poke(why: TriggerReason): void {
    const trigger = this.deps.trigger;
    if (trigger === null) return;
    trigger.invoke(why).catch((error: unknown) => {
      const said = 'watchdog not invoked; its schedule and S3 notifications still come';
      this.deps.log.warn({ err: describeError(error), reason: why.reason }, said);
    });
  }

  /** Takes a sample, writes a standby's beat, and the heartbeat when the policy says it is due. */
  async sampleOnce(): Promise<Sample> {
    // A lease that lapsed since the last lease round fences the worker now, not at the next round.
    await this.lease.publish();
    const sample: Sample = { ...(await this.sampler.take()), ...this.figures.of(this.lease.current) };
    const previous = this.samples.at(-1);
    this.samples.push(sample);
    if (this.samples.length > this.deps.config.heartbeatSamples) this.samples.shift();
    const c = this.deps.config;
    const role = this.lease.current;
    if (role.role !== 'primary') await this.writeBeat(sample);
    const due = heartbeatDue({
      role,
      samples: this.samples,
      last: this.written,
      unsent: this.unsent,
      now: mono(),
      keepAliveMs: c.heartbeatKeepAliveSeconds * 1000,
      recoverySamples: c.recoverySamples,
      sampleMs: c.sampleIntervalSeconds * 1000,
    });
    if (due !== null) await this.publishHeartbeat();
    // The stall rule's own judgement of this sample: a failing one of the consuming node gets
    // the watchdog now, not when S3's notification of the heartbeat arrives.
    const fault = role.role === 'primary' ? judgeSample(previous, sample) : null;
    if (fault !== null) {
      this.poke({ node: c.nodeName, reason: 'failing-sample', detail: `sample ${sample.seq}: ${fault}` });
    }
    return sample;
  }

  /**
   * A node that is not the primary writes each sample's number to its beat item in the control
   * table: the watchdog judges its liveness by it. A write that fails is left to the next sample.
   */
  private async writeBeat(sample: Sample): Promise<void> {
    const { seq, unreachable } = sample;
    const beat: Beat = { version: 1, boot: this.boot, seq, ...(unreachable === undefined ? {} : { unreachable }) };
    try {
      await this.deps.store.put(KEYS.beat(this.deps.config.nodeName), beat);
    } catch (error) {
      this.deps.log.warn({ err: describeError(error) }, 'beat not written; the next sample writes it');
    }
  }

  /** Writes the heartbeat with the most recent samples. */
  private async publishHeartbeat(): Promise<void> {
    const role = this.lease.current;
    const newest = this.samples.at(-1);
    if (newest === undefined) return;
    const news = newsOf(newest, this.deps.config.sampleIntervalSeconds * 1000);
    const written = { role: role.role, epoch: role.epoch, news };
    const heartbeat: Heartbeat = {
      version: 1,
      node: this.deps.config.nodeName,
      boot: this.boot,
      agentVersion: VERSION,
      role: written.role,
      samples: [...this.samples],
      ...(this.deps.instanceId === undefined ? {} : { instanceId: this.deps.instanceId }),
    };
    try {
      await this.deps.store.put(KEYS.heartbeat(this.deps.config.nodeName), heartbeat);
    } catch (error) {
      this.unsent++;
      throw error;
    }
    this.written = { ...written, at: mono() };
    this.unsent = 0;
  }

  private async listen(): Promise<number> {
    const { healthHost, healthPort, nodeName: node } = this.deps.config;
    this.server = await serveHealth(healthHost, healthPort, () => {
      const last = this.samples.at(-1);
      const role = this.lease.current;
      // 200 only for the live primary: Route 53 failover records follow this answer.
      const ok = mayConsume(role, mono()) && last !== undefined && last.workerProcesses > 0;
      return {
        ok,
        body: { node, role: role.role, epoch: role.epoch, lastSample: last ?? null, lastSync: this.lastRound },
      };
    });
    const address = this.server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** One lease round first (so the worker learns its role at once), then the loops and /healthz. */
  async start(): Promise<number> {
    await this.lease.round();
    const port = await this.listen();
    this.leaseLoop.start(this.lease.nextDelayMs());
    this.sampleLoop.start();
    this.syncLoop.start(this.deps.config.syncIntervalSeconds * 1000);
    return port;
  }

  /** Stops every loop and the server; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([this.sampleLoop.stop(), this.leaseLoop.stop(), this.syncLoop.stop()]);
      const server = this.server;
      await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    })();
    return this.closing;
  }
}
