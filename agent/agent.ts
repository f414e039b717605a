import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Config } from '../lib/core/config';
import { describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import { leaderSchema, type Heartbeat, type Sample } from '../lib/core/schemas';
import type { TaskQueue } from '../lib/aws/queue';
import type { StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';
import { Loop } from '../lib/loop';
import { rolePath, writeJsonAtomic, type RoleFile } from './registry';
import { Sampler } from './sampler';

export const AGENT_VERSION = '0.1.0';

export interface AgentDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  queue: TaskQueue | null;
  log: Logger;
  /** This machine's wall clock. */
  now: () => number;
  instanceId?: string;
}

/**
 * The on-instance agent (`queen-fleet-peer-sync`): samples health every sample interval and
 * publishes the heartbeat, reads the primary's record every sync interval and tells the worker
 * through the role file whether it may consume, and serves /healthz.
 */
export class Agent {
  private readonly boot = randomUUID();
  private readonly samples: Sample[] = [];
  private role: RoleFile = { role: 'standby', epoch: 0 };
  private readonly sampler: Sampler;
  private readonly sampleLoop: Loop;
  private readonly syncLoop: Loop;
  private server: Server | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly deps: AgentDeps) {
    const c = deps.config;
    this.sampler = new Sampler({
      dataDir: c.dataDir,
      completionWindowMs: c.completionWindowSeconds * 1000,
      now: deps.now,
      epoch: () => this.role.epoch,
      backlog: async () => {
        // Only the consuming node's backlog feeds the stall rule; a standby saves the request.
        if (deps.queue === null || this.role.role !== 'primary') return null;
        try {
          const b = await deps.queue.backlog();
          return b.visible + b.inFlight;
        } catch (error) {
          deps.log.warn({ err: describeError(error) }, 'queue backlog unavailable for this sample');
          return null;
        }
      },
    });
    const onError = (what: string) => (error: unknown) => deps.log.error({ err: describeError(error) }, `${what} failed; next round retries`);
    this.sampleLoop = new Loop(c.sampleIntervalSeconds * 1000, async () => { await this.sampleOnce(); }, onError('sample'));
    this.syncLoop = new Loop(c.syncIntervalSeconds * 1000, async () => { await this.syncOnce(); }, onError('sync'));
  }

  /** Takes a sample and publishes the heartbeat with the most recent samples. */
  async sampleOnce(): Promise<Sample> {
    const sample = await this.sampler.take();
    this.samples.push(sample);
    if (this.samples.length > this.deps.config.heartbeatSamples) this.samples.shift();
    const heartbeat: Heartbeat = {
      version: 1,
      node: this.deps.config.nodeName,
      boot: this.boot,
      agentVersion: AGENT_VERSION,
      role: this.role.role,
      samples: [...this.samples],
      ...(this.deps.instanceId === undefined ? {} : { instanceId: this.deps.instanceId }),
    };
    await this.deps.store.put(KEYS.heartbeat(this.deps.config.nodeName), heartbeat);
    return sample;
  }

  /** Reads the primary's record and tells the worker its role. */
  async syncOnce(): Promise<RoleFile> {
    const leader = await this.deps.store.read(KEYS.leader, leaderSchema);
    const next: RoleFile =
      leader === null ? { role: 'standby', epoch: 0 } : { role: leader.value.primary === this.deps.config.nodeName ? 'primary' : 'standby', epoch: leader.value.epoch };
    if (next.role !== this.role.role || next.epoch !== this.role.epoch) {
      this.deps.log.info({ role: next.role, epoch: next.epoch }, 'role changed');
    }
    this.role = next;
    await writeJsonAtomic(rolePath(this.deps.config.dataDir), next);
    return next;
  }

  private async listen(): Promise<number> {
    const server = createServer((req, res) => {
      const last = this.samples.at(-1);
      const ok = req.url === '/healthz' && this.role.role === 'primary' && last !== undefined && last.workerProcesses > 0;
      res.writeHead(req.url === '/healthz' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ node: this.deps.config.nodeName, role: this.role.role, epoch: this.role.epoch, lastSample: last ?? null }));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.deps.config.healthPort, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** Syncs once (so the worker learns its role at once), then starts both loops and /healthz. */
  async start(): Promise<number> {
    await this.syncOnce().catch((error: unknown) => this.deps.log.error({ err: describeError(error) }, 'first sync failed; retrying on schedule'));
    const port = await this.listen();
    this.sampleLoop.start();
    this.syncLoop.start(this.deps.config.syncIntervalSeconds * 1000);
    return port;
  }

  /** Stops both loops and the server; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([this.sampleLoop.stop(), this.syncLoop.stop()]);
      await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
    })();
    return this.closing;
  }
}
