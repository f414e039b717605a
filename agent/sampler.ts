import { STORE_NAMES, type Sample, type StoreName } from '../lib/core/schemas';
import { processTree } from './proc';
import { bootId } from './runtime/boot';
import { mono } from './runtime/clock';
import {
  emptyRegistry,
  pidFileSchema,
  proofPath,
  proofSchema,
  readJsonFile,
  registryPath,
  registrySchema,
  workerPidPath,
  type Registry,
} from './registry';

/** Inputs the sampler needs from outside: paths, the window, clocks, the queue backlog. */
export interface SamplerDeps {
  dataDir: string;
  completionWindowMs: number;
  /** Wall clock of this machine (only compared with this machine's own timestamps). */
  now: () => number;
  backlog: () => Promise<number | null>;
  epoch: () => number;
  /** Does the agent's lease let this node consume now? */
  mayConsume: () => boolean;
  /** The stores the agent's own requests found unreachable (the worker's are in its registry). */
  unreachable: () => readonly StoreName[];
  procRoot?: string;
}

interface CpuMark {
  cpuMs: number;
  at: number;
}

/** Takes one health sample per call; keeps the CPU baseline between calls. */
export class Sampler {
  private seq = 0;
  private lastCpu: CpuMark | null = null;

  constructor(private readonly deps: SamplerDeps) {}

  private async workerProcesses(): Promise<{ count: number; cpuMs: number; rssBytes: number; id: string | null }> {
    const none = { count: 0, cpuMs: 0, rssBytes: 0, id: null };
    const pidFile = await readJsonFile(workerPidPath(this.deps.dataDir), pidFileSchema).catch(() => null);
    if (pidFile === null) return none;
    const tree = await processTree(pidFile.pid, this.deps.procRoot);
    // A reused pid is another process: the start time must match the worker's own.
    if (tree.length === 0 || tree[0]?.startTicks !== pidFile.startTicks) return none;
    return {
      id: `${pidFile.pid}:${pidFile.startTicks}`,
      count: tree.length,
      cpuMs: tree.reduce((sum, p) => sum + p.cpuMs, 0),
      rssBytes: tree.reduce((sum, p) => sum + p.rssBytes, 0),
    };
  }

  private async registry(): Promise<Registry> {
    // A torn or malformed registry is treated as empty for this sample; the worker rewrites it.
    return (await readJsonFile(registryPath(this.deps.dataDir), registrySchema).catch(() => null)) ?? emptyRegistry();
  }

  /**
   * The age of the running worker's last passing self-test, by this machine's monotonic clock;
   * null without one, or when another worker (one that has exited since) wrote it.
   */
  private async proofAge(worker: string | null): Promise<number | null> {
    const proof = await readJsonFile(proofPath(this.deps.dataDir), proofSchema).catch(() => null);
    if (proof === null || !proof.ok || proof.boot !== bootId()) return null;
    if (proof.worker !== undefined && proof.worker !== worker) return null;
    return Math.max(0, mono() - proof.at);
  }

  async take(): Promise<Sample> {
    const [procs, registry, backlog] = await Promise.all([
      this.workerProcesses(),
      this.registry(),
      this.deps.backlog(),
    ]);
    const now = this.deps.now();
    let cpuPercent = 0;
    if (this.lastCpu !== null && now > this.lastCpu.at && procs.cpuMs >= this.lastCpu.cpuMs) {
      cpuPercent = ((procs.cpuMs - this.lastCpu.cpuMs) / (now - this.lastCpu.at)) * 100;
    }
    this.lastCpu = { cpuMs: procs.cpuMs, at: now };
    const since = now - this.deps.completionWindowMs;
    const unreachable = STORE_NAMES.filter(
      (n) => this.deps.unreachable().includes(n) || registry.unreachable.includes(n),
    );
    return {
      seq: this.seq++,
      at: now,
      mono: mono(),
      workerProcesses: procs.count,
      cpuPercent: Math.round(cpuPercent * 10) / 10,
      memoryBytes: procs.rssBytes,
      completedTotal: registry.completedTotal,
      completionsInWindow: registry.recentCompletions.filter((t) => t >= since).length,
      inFlight: registry.inFlight,
      backlog,
      epochSeen: this.deps.epoch(),
      consumingEpoch: registry.consumingEpoch,
      mayConsume: this.deps.mayConsume(),
      ...(unreachable.length === 0 ? {} : { unreachable }),
      proofAgeMs: await this.proofAge(procs.id),
      worker: procs.id,
    };
  }
}
