import type { Config } from '../lib/core/config';
import { describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import { beatSchema } from '../lib/core/schemas';
import type { StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';
import type { LapsedBeat } from '../lib/core/fleet/lease';
import type { PeerReport } from './lease-keeper';
import { mono } from './runtime/clock';

interface Known {
  boot: string;
  seq: number;
  /** When a read first returned this sample (the read's end: the sample is at most this new). */
  changedAt: number;
  /** When the last read that returned it was sent (its start: the sample was still the newest then). */
  readAt: number;
  /** Known from the lapsed lease this node took over (`seed`), not from the node's beat item. */
  lapsed?: boolean;
}

export interface PeerWatchDeps {
  config: Config & { nodeName: string };
  store: StateStore;
  log: Logger;
  clock?: () => number;
}

/**
 * The primary's watch on the other nodes: between its lease renewals it reads their beat items
 * (`nodes/<node>/beat`, one read unit each), and the renewal carries what it found (`leader.peers`):
 * each node's newest sample and how long it has not changed by this machine's monotonic clock.
 * The watchdog runs about once a minute; with this it learns within two renewal periods that a
 * standby went quiet, and the agent invokes it then (`newlyQuiet`).
 *
 * Quiet time is never overstated: it runs from the end of the read that first returned the
 * sample to the start of the last read that still did, and a read that fails adds nothing to
 * it. A node never read, or whose item is gone, is left out: the watchdog judges it by what
 * it reads itself.
 */
export class PeerWatch {
  private readonly known = new Map<string, Known>();
  /** Nodes already reported quiet in their current quiet spell. */
  private readonly told = new Set<string>();
  private readonly clock: () => number;

  constructor(private readonly deps: PeerWatchDeps) {
    this.clock = deps.clock ?? mono;
  }

  private others(): string[] {
    return this.deps.config.nodes.map((n) => n.name).filter((name) => name !== this.deps.config.nodeName);
  }

  /** Reads every other node's beat item at once; a failed read keeps what was known of that node. */
  async observe(): Promise<void> {
    await Promise.all(
      this.others().map(async (name) => {
        const sentAt = this.clock();
        try {
          const got = await this.deps.store.read(KEYS.beat(name), beatSchema);
          const at = this.clock();
          const known = this.known.get(name);
          const older = known?.lapsed === true && (got === null || (got.value.boot === known.boot && got.value.seq <= known.seq));
          if (older) known.readAt = sentAt;
          else if (got === null) this.known.delete(name);
          else if (known === undefined || known.boot !== got.value.boot || known.seq !== got.value.seq) this.known.set(name, { boot: got.value.boot, seq: got.value.seq, changedAt: at, readAt: at });
          else known.readAt = sentAt;
        } catch (error) {
          this.deps.log.warn({ err: describeError(error), node: name }, 'beat unreadable this round; its quiet time waits for the next read');
        }
      }),
    );
  }

  /**
   * Goes on from what this node's takeover of a lapsed lease said of the old primary (its last
   * renewal's sample, quiet for `quietMs`): a primary writes no beat item, so its item is absent
   * or older, and until it holds a newer sample of that boot (or another boot's) the sample stays
   * its newest and its quiet time grows. Each renewal then carries it, whichever one the
   * watchdog reads first.
   */
  seed(lapsed: LapsedBeat): void {
    const now = this.clock();
    this.known.set(lapsed.node, { boot: lapsed.boot, seq: lapsed.seq, changedAt: now - lapsed.quietMs, readAt: now, lapsed: true });
  }

  private static quietMs(k: Known): number {
    return Math.max(0, Math.round(k.readAt - k.changedAt));
  }

  /** What the next renewal carries, or undefined when no other node's beat was read. */
  report(): PeerReport | undefined {
    if (this.known.size === 0) return undefined;
    return Object.fromEntries([...this.known].map(([name, k]) => [name, { boot: k.boot, seq: k.seq, quietMs: PeerWatch.quietMs(k) }]));
  }

  /**
   * Nodes a renewal that landed said were quiet for `thresholdMs` or more (`carried`, the lease
   * keeper's `carriedPeers`), and had not said so before: each is told once per quiet spell, and
   * only once the lease carries it, so the watchdog it invokes reads it there.
   */
  newlyQuiet(carried: PeerReport | null, thresholdMs: number): string[] {
    const found: string[] = [];
    for (const name of [...this.told]) if ((carried?.[name]?.quietMs ?? 0) < thresholdMs) this.told.delete(name);
    for (const [name, peer] of Object.entries(carried ?? {})) {
      if (peer.quietMs < thresholdMs || this.told.has(name)) continue;
      this.told.add(name);
      found.push(name);
    }
    return found;
  }

  /** Forgets everything (this node is no longer the primary: another one watches). */
  reset(): void {
    this.known.clear();
    this.told.clear();
  }
}
