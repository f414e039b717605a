import type { NodeSpec } from '../config';
import { workerFault, type WorkerFault } from '../fleet/readiness';
import type { Heartbeat, Leader, Sample } from '../schemas';
import type { Observed } from './observed';

/** What `fleet rejoin NODE` may do, judged from what it read. Pure. */
export type RejoinPlan =
  | { kind: 'unknown-node'; message: string }
  | { kind: 'refuse'; message: string }
  /**
   * Restart the node's worker in standby mode; `fault` is what keeps it from being ready now (null: it looks ready).
   */
  | { kind: 'go'; fault: WorkerFault | null; boot: string | null; seq: number };

export const planRejoin = (o: {
  node: string;
  nodes: readonly NodeSpec[];
  leader: Observed<Leader>;
  heartbeat: Observed<Heartbeat> | undefined;
  sampleMs: number;
}): RejoinPlan => {
  if (!o.nodes.some((n) => n.name === o.node))
    return {
      kind: 'unknown-node',
      message: `${o.node} is not a configured node (${o.nodes.map((n) => n.name).join(', ')})`,
    };
  if (o.leader.state !== 'ok')
    return {
      kind: 'refuse',
      message: `leader.json is ${o.leader.state}: who is primary is unknown, so no worker is restarted`,
    };
  if (o.leader.value.primary === o.node)
    return {
      kind: 'refuse',
      message:
        `${o.node} is the primary of epoch ${o.leader.value.epoch}: a rejoin is for a standby (to restart ` +
        `the primary's worker, the watchdog's ladder or systemctl does that)`,
    };
  const hb = o.heartbeat?.state === 'ok' ? o.heartbeat.value : null;
  const last: Sample | undefined = hb?.samples.at(-1);
  if (hb === null || last === undefined)
    return {
      kind: 'refuse',
      message:
        `${o.node} has no readable heartbeat: its agent is not running; start it first (sudo systemctl start ` +
        `queen-fleet-peer-sync)`,
    };
  // A worker started while its agent still holds a lease could consume beside the primary.
  if (hb.role === 'primary' || last.mayConsume === true)
    return {
      kind: 'refuse',
      message:
        `${o.node}'s agent still holds a lease (it says ${hb.role}); wait until it fences itself (within ` +
        `leaseExpirySeconds)`,
    };
  return { kind: 'go', fault: workerFault(last, o.sampleMs), boot: hb.boot, seq: last.seq };
};

/**
 * The node's newest heartbeat shows it rejoined: a sample taken after the restart (a later
 * sequence number of the same agent boot, or a new boot) with a live worker whose self-test is
 * younger than the time since the restart (by the caller's clock: a duration, not another
 * machine's time).
 */
export const rejoinedSince = (
  hb: Heartbeat | null,
  since: { boot: string | null; seq: number; elapsedMs: number },
  sampleMs: number,
): boolean => {
  const last = hb?.samples.at(-1);
  if (hb === null || last === undefined) return false;
  const newer = hb.boot !== since.boot || last.seq > since.seq;
  return newer && workerFault(last, sampleMs) === null && (last.proofAgeMs ?? Infinity) <= since.elapsedMs;
};
