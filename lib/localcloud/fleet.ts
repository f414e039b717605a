import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { NODE_COMMANDS } from '../aws/run-command';
import type { Config } from '../core/config';
import type { Bundles } from './bundle';
import type { LocalCloud } from './cloud';
import type { FleetControl } from './fakes';
import type { HostCommand, HostEvent, HostRequest } from './host-protocol';
import { exited, killGroup } from './spawn';

/** One node of the local fleet, as the fleet tracks it. */
export interface LocalNode {
  name: string;
  instanceId: string;
  lightsailName: string;
  dir: string;
  host: ChildProcess;
  workerPid: number | null;
  agentPid: number | null;
  alive: boolean;
}

/** Fleet events, with the node they concern. */
export type FleetEvent = HostEvent & { node: string };

/** The fixed node commands and what the node host does for each. */
const HOST_COMMANDS: Record<string, HostCommand> = {
  [NODE_COMMANDS.restartWorker]: 'restart-worker',
  [NODE_COMMANDS.stopWorker]: 'stop-worker',
  [NODE_COMMANDS.startWorker]: 'start-worker',
  [NODE_COMMANDS.restartAgent]: 'restart-agent',
};

/** Deterministic managed-instance ids for the local nodes: `mi-0000000000000001`, … */
export const localInstanceId = (index: number): string => `mi-${index.toString(16).padStart(17, '0')}`;

/** The environment every process of a node gets: the local cloud as its AWS, its own key. */
const nodeEnv = (cloud: LocalCloud, configFile: string, node: string, dir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_ENDPOINT_URL: cloud.endpoint,
  AWS_REGION: cloud.region,
  AWS_ACCESS_KEY_ID: node,
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  LOG_LEVEL: 'info',
  FLEET_CONFIG_FILE: configFile,
  FLEET_NODE_NAME: node,
  FLEET_DATA_DIR: dir,
  FLEET_HEALTH_PORT: '0',
});

/**
 * The local fleet: one process group per node (node host + agent + worker), started from the
 * bundles. It is the SSM and Lightsail fakes' view of the machines.
 */
export class LocalFleet extends EventEmitter implements FleetControl {
  readonly nodes = new Map<string, LocalNode>();
  private nextId = 1;
  private readonly pending = new Map<number, (r: { ok: boolean; output: string }) => void>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly cloud: LocalCloud,
    private readonly config: Config,
    private readonly bundles: Bundles,
    private readonly runDir: string,
    private readonly configFile: string,
  ) {
    super();
  }

  /** Starts a node's process group. */
  startNode(name: string, index: number): LocalNode {
    const dir = join(this.runDir, name);
    mkdirSync(dir, { recursive: true });
    const out = openSync(join(dir, 'host.log'), 'a');
    const host = fork(this.bundles.nodeHost, [], {
      detached: true,
      stdio: ['ignore', out, out, 'ipc'],
      env: {
        ...nodeEnv(this.cloud, this.configFile, name, dir),
        QF_AGENT_BUNDLE: this.bundles.agent,
        QF_WORKER_BUNDLE: this.bundles.worker,
        QF_RESTART_MS: String(this.config.workerRestartSeconds * 1000),
        QF_STOP_TIMEOUT_MS: String(this.config.workerStopTimeoutSeconds * 1000),
      },
    });
    const node: LocalNode = { name, instanceId: localInstanceId(index), lightsailName: `queen-fleet-${name}`, dir, host, workerPid: null, agentPid: null, alive: true };
    host.on('message', (event: HostEvent) => this.onHostEvent(node, event));
    host.once('exit', () => {
      node.alive = false;
      node.workerPid = null;
      node.agentPid = null;
    });
    this.nodes.set(name, node);
    return node;
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
    this.emit('event', { ...event, node: node.name } satisfies FleetEvent);
  }

  private request(node: LocalNode, message: HostRequest): boolean {
    if (!node.alive || !node.host.connected) return false;
    node.host.send(message);
    return true;
  }

  runCommand(instanceId: string, command: string): Promise<{ ok: boolean; output: string }> | null {
    const node = [...this.nodes.values()].find((n) => n.instanceId === instanceId);
    // A node that is down or cut off never runs the command: SSM reports no result.
    if (node === undefined || !node.alive || this.cut(node.name)) return null;
    const hostCommand = HOST_COMMANDS[command];
    if (hostCommand === undefined) return Promise.resolve({ ok: false, output: `unknown command ${command}` });
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (!this.request(node, { type: 'command', id, command: hostCommand })) resolve({ ok: false, output: 'node host unreachable' });
    });
  }

  /** A node cut off from the cloud by a partition fault. */
  private cut(name: string): boolean {
    return this.cloud.faults.get(name)?.partition === true;
  }

  instances(): ReturnType<FleetControl['instances']> {
    // The SSM agent is its own process on a real node: it stays online when ours dies, and is
    // lost when the node dies or is cut off.
    return [...this.nodes.values()].map((n) => ({ instanceId: n.instanceId, name: n.name, lightsailName: n.lightsailName, running: n.alive, agentOnline: n.alive && !this.cut(n.name) }));
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

  /** Pulls the plug: the whole process group dies at once, like a node that loses power. */
  killNode(name: string): void {
    const node = this.nodes.get(name);
    if (node === undefined) return;
    killGroup(node.host.pid);
    node.alive = false;
  }

  /** Shuts every node down (SIGTERM, then the whole group is killed). Idempotent. */
  stop(timeoutMs = 5000): Promise<void> {
    this.closing ??= (async () => {
      const nodes = [...this.nodes.values()];
      for (const n of nodes) this.request(n, { type: 'shutdown' });
      await Promise.all(
        nodes.map(async (n) => {
          const timer = setTimeout(() => killGroup(n.host.pid), timeoutMs);
          await exited(n.host);
          clearTimeout(timer);
          killGroup(n.host.pid);
        }),
      );
      for (const resolve of this.pending.values()) resolve({ ok: false, output: 'fleet stopped' });
      this.pending.clear();
    })();
    return this.closing;
  }
}
