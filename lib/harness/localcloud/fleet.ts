import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import type { Config } from '../../core/config';
import { nodeRoleNameOf } from '../../core/stack-names';
import { DAEMON_NODE_FLAGS, type Bundles } from './bundle';
import type { LocalCloud } from './cloud';
import { lightsailView, type LightsailState, type MachineView, type Machines } from './fakes';
import type { HostEvent, HostRequest } from './host-protocol';
import { HOST_COMMANDS, localInstanceId, nodeEnv, type MachineEvent, type LocalNode } from './machine';
import { isLive, NODE_MARK, signalMarked, UNIT_MARK, processesMarked } from './processes';
import { exited, killGroup } from '../../../agent/runtime/child-process';

export { localInstanceId, type MachineEvent, type LocalNode };

/**
 * The local fleet: each node a machine whose processes (node host, agent, worker, stage
 * commands) all carry the node's mark, booted from the bundles. It is what the SSM, Lightsail
 * and drill faults act on: a crash kills every process and leaves Lightsail `running`, a stop
 * goes through `stopping`, a freeze stops every process, a reboot starts a new boot later.
 */
export class LocalFleet extends EventEmitter implements Machines {
  readonly nodes = new Map<string, LocalNode>();
  private nextId = 1;
  private readonly pending = new Map<number, (r: { ok: boolean; output: string }) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly cloud: LocalCloud,
    private readonly config: Config,
    private readonly bundles: Bundles,
    private readonly runDir: string,
    private readonly configFile: string,
    /** Node's own options for the agent and the worker: by default the units', a bench may weigh others. */
    private readonly nodeArgs: readonly string[] = DAEMON_NODE_FLAGS,
  ) {
    super();
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closing === undefined) fn();
    }, ms);
    this.timers.add(timer);
  }

  private setPower(node: LocalNode, power: LightsailState): void {
    node.power = power;
    node.powerSince = Date.now();
    this.emit('event', { type: 'machine', state: power, node: node.name } satisfies MachineEvent);
  }

  /** Creates a node's machine and boots it. */
  startNode(name: string, index: number): LocalNode {
    const dir = join(this.runDir, name);
    mkdirSync(dir, { recursive: true });
    const node: LocalNode = {
      name,
      index,
      instanceId: localInstanceId(index),
      lightsailName: `queen-fleet-${name}`,
      dir,
      host: null,
      workerPid: null,
      agentPid: null,
      alive: false,
      up: false,
      frozen: false,
      power: 'running',
      powerSince: Date.now(),
    };
    this.nodes.set(name, node);
    this.boot(node);
    return node;
  }

  /** Starts a new boot of the machine: a fresh boot id, the same data directory, both units started as at boot. */
  private boot(node: LocalNode): void {
    const out = openSync(join(node.dir, 'host.log'), 'a');
    const host = fork(this.bundles.nodeHost, [], {
      detached: true,
      stdio: ['ignore', out, out, 'ipc'],
      env: {
        ...nodeEnv(this.cloud, this.configFile, node.name, node.dir),
        QF_AGENT_BUNDLE: this.bundles.agent,
        QF_WORKER_BUNDLE: this.bundles.worker,
        QF_NODE_ARGS: JSON.stringify(this.nodeArgs),
        QF_RESTART_MS: String(this.config.workerRestartSeconds * 1000),
        QF_STOP_TIMEOUT_MS: String(this.config.workerStopTimeoutSeconds * 1000),
        QF_BOOT_ID: randomUUID(),
      },
    });
    Object.assign(node, { host, alive: true, up: true, frozen: false, workerPid: null, agentPid: null });
    host.on('message', (event: HostEvent) => this.onHostEvent(node, event));
    host.once('exit', () => {
      if (node.host !== host) return;
      node.alive = false;
      node.workerPid = null;
      node.agentPid = null;
    });
  }

  private onHostEvent(node: LocalNode, event: HostEvent): void {
    if (event.type === 'worker-started') node.workerPid = event.pid;
    if (event.type === 'worker-exited' && node.workerPid === event.pid) node.workerPid = null;
    if (event.type === 'agent-started') node.agentPid = event.pid;
    if (event.type === 'agent-exited' && node.agentPid === event.pid) node.agentPid = null;
    if (event.type === 'command-done') {
      this.pending.get(event.id)?.({ ok: event.ok, output: event.output });
      this.pending.delete(event.id);
    }
    this.emit('event', { ...event, node: node.name } satisfies MachineEvent);
  }

  private request(node: LocalNode, message: HostRequest): boolean {
    if (!node.alive || node.host === null || !node.host.connected) return false;
    node.host.send(message);
    return true;
  }

  private byInstance(instanceId: string): LocalNode | undefined {
    return [...this.nodes.values()].find((n) => n.instanceId === instanceId);
  }

  /** A node cut off from the cloud: a partition, or a blackhole (its SSM Agent's pings vanish too). */
  private cut(name: string): boolean {
    return this.cloud.faults.get(name)?.partition === true || this.cloud.blackholes.has(name);
  }

  list(): MachineView[] {
    return [...this.nodes.values()].map((n) => ({
      instanceId: n.instanceId,
      name: n.name,
      lightsailName: n.lightsailName,
      lightsailState: lightsailView(n.power, n.up, this.cloud.behaviour.lightsailStates),
      // The SSM Agent is a process of its own: it answers while the OS runs and reaches AWS,
      // whatever became of our agent.
      reachable: n.up && n.alive && !n.frozen && !this.cut(n.name),
      iamRole: nodeRoleNameOf(this.config, n.name),
    }));
  }

  run(instanceId: string, command: string): Promise<{ ok: boolean; output: string }> {
    const node = this.byInstance(instanceId);
    if (node === undefined) return Promise.resolve({ ok: false, output: 'no such instance' });
    const hostCommand = HOST_COMMANDS[command];
    if (hostCommand === undefined) return Promise.resolve({ ok: false, output: `unknown command ${command}` });
    const id = this.nextId++;
    // A node that dies before answering never answers: SSM keeps the command InProgress.
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.request(node, { type: 'command', id, command: hostCommand });
    });
  }

  /** The node's data directory (its agent's and worker's state: held.json, registry.json, …). */
  dataDir(name: string): string {
    return join(this.runDir, name);
  }

  /** Sends a signal to a node's worker (SIGSTOP stalls it, SIGKILL crashes it). */
  signalWorker(name: string, signal: NodeJS.Signals): boolean {
    const node = this.nodes.get(name);
    return node !== undefined && this.request(node, { type: 'signal-worker', signal });
  }

  /** Sends any host request (stall-workers, kill-agent, clock-offset) to a node. */
  tell(name: string, message: HostRequest): boolean {
    const node = this.nodes.get(name);
    return node !== undefined && this.request(node, message);
  }

  /** Signals every process of the node's current boot: its host's group and everything marked as the node's. */
  private signalAll(node: LocalNode, signal: NodeJS.Signals): void {
    killGroup(node.host?.pid, signal);
    signalMarked(NODE_MARK, node.dir, signal);
  }

  /** The VM crashes: every process dies at once; Lightsail still says `running`, SSM pings stop. */
  killNode(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined || !node.up) return;
    this.signalAll(node, 'SIGKILL');
    Object.assign(node, { alive: false, up: false, frozen: false });
  }

  /** Every process stops (a hung kernel, memory thrash); `thawNode` resumes them all. */
  freezeNode(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined || !node.up) return;
    this.signalAll(node, 'SIGSTOP');
    node.frozen = true;
  }

  thawNode(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined || !node.frozen) return;
    this.signalAll(node, 'SIGCONT');
    node.frozen = false;
  }

  /**
   * The stage commands running on a node (its worker's descendants), stopped: they hang without
   * CPU. Only live ones count: a stage that already exited (a zombie until the worker reaps it)
   * is not stopped by the signal, and its task goes on.
   */
  hangStages(name: string): number {
    const node = this.nodes.get(name);
    if (node === undefined || !node.up) return 0;
    const stages = processesMarked(UNIT_MARK, `${node.dir}/worker`).filter(
      (pid) => pid !== node.workerPid && isLive(pid),
    );
    for (const pid of stages) {
      try {
        process.kill(pid, 'SIGSTOP');
      } catch {
        // Gone meanwhile.
      }
    }
    return stages.length;
  }

  /**
   * A reboot: every process is killed; the machine is back after `downMs` with a new boot.
   * Lightsail says `running` throughout.
   */
  rebootNode(name: string, downMs: number): void {
    const node = this.nodes.get(name);
    if (node === undefined || !node.up) return;
    this.killNode(name);
    this.later(downMs, () => this.boot(node));
  }

  /**
   * StopInstance: the OS shuts down (each service gets SIGTERM and its stop timeout, then the
   * rest is killed) while Lightsail says `stopping`, then `stopped`.
   */
  stopNode(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined || node.power !== 'running') return;
    this.setPower(node, 'stopping');
    const host = node.host;
    if (node.up && !this.request(node, { type: 'shutdown' })) this.signalAll(node, 'SIGKILL');
    const timeoutMs = this.config.workerStopTimeoutSeconds * 1000 + 1000;
    this.later(timeoutMs, () => {
      if (node.host === host) this.signalAll(node, 'SIGKILL');
      Object.assign(node, { alive: false, up: false });
    });
    this.later(Math.max(timeoutMs, this.cloud.behaviour.lightsailStates.stoppingMs), () =>
      this.setPower(node, 'stopped'),
    );
  }

  /** StartInstance: `pending`, then `running` with a new boot. */
  startInstance(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined || (node.power !== 'stopped' && node.power !== 'stopping')) return;
    const start = (): void => {
      this.setPower(node, 'pending');
      this.later(this.cloud.behaviour.lightsailStates.pendingMs, () => {
        this.setPower(node, 'running');
        this.boot(node);
      });
    };
    if (node.power === 'stopped') start();
    else
      this.later(Math.max(0, this.cloud.behaviour.lightsailStates.stoppingMs - (Date.now() - node.powerSince)), start);
  }

  /** Shuts every node down (SIGTERM, then everything of the node is killed). Idempotent. */
  stop(timeoutMs = 5000): Promise<void> {
    this.closing ??= (async () => {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      const nodes = [...this.nodes.values()];
      for (const n of nodes) {
        if (n.frozen) this.signalAll(n, 'SIGCONT');
        this.request(n, { type: 'shutdown' });
      }
      await Promise.all(
        nodes.map(async (n) => {
          if (n.host !== null) {
            const timer = setTimeout(() => killGroup(n.host?.pid), timeoutMs);
            await exited(n.host);
            clearTimeout(timer);
          }
          this.signalAll(n, 'SIGKILL');
        }),
      );
      for (const resolve of this.pending.values()) resolve({ ok: false, output: 'fleet stopped' });
      this.pending.clear();
    })();
    return this.closing;
  }
}
