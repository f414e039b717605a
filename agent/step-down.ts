import type { Config } from '../lib/core/config';
import { describeError } from '../lib/core/errors';
import { KEYS } from '../lib/core/keys';
import { beatSchema, type Beat } from '../lib/core/schemas';
import type { AlertTopic } from '../lib/aws/alerts';
import type { Reach } from '../lib/aws/reach';
import { alertFromNode } from './runtime/node-alerts';
import type { StateStore } from '../lib/aws/state-store';
import type { Logger } from '../lib/log';

/**
 * The nodes that can do the work now, by two reads of their beat items: a beat that moved between
 * the reads (the node is alive) and names no store of the work (S3, SQS) as unreachable. Pure.
 */
export const readyPeers = (before: ReadonlyMap<string, Beat>, after: ReadonlyMap<string, Beat>): string[] =>
  [...after.entries()]
    .filter(([node, beat]) => {
      const prev = before.get(node);
      const moved = prev !== undefined && (prev.boot !== beat.boot || prev.seq !== beat.seq);
      return moved && !(beat.unreachable ?? []).some((s) => s === 's3' || s === 'sqs');
    })
    .map(([node]) => node);

export interface StepDownDeps {
  config: Config & { nodeName: string };
  store: Pick<StateStore, 'read'>;
  reach: Reach;
  log: Logger;
  alerts: AlertTopic | null;
  /** This machine's wall clock (alert times). */
  now: () => number;
}

/**
 * Whether the primary should give the role up: it has not reached S3 for a whole stall window
 * (its work cannot go on) while another node can do the work. When no node can, it is an outage
 * of S3, not a fault of this node, and it keeps the role. Reads the other nodes' beats only
 * while S3 is down that long: nothing in a healthy fleet.
 */
export class StepDown {
  private last = new Map<string, Beat>();
  /** The S3 outage this node alerted (OUTAGE), until S3 answers again: one alert a spell. */
  private outage: string | null = null;

  constructor(private readonly deps: StepDownDeps) {}

  /** The stall window: how long S3 may be out of reach before the role is given up. */
  private get windowMs(): number {
    return this.deps.config.stallSamples * this.deps.config.sampleIntervalSeconds * 1000;
  }

  /**
   * One judgement of the primary, each lease round: gives the role up (`resign`) while another node
   * can work; when none can, alerts the outage once, and its end (RECOVERED) when S3 answers.
   */
  async judge(epoch: number, resign: () => Promise<unknown>): Promise<void> {
    const { config, log, alerts, now } = this.deps;
    const { stepDown, outage } = await this.due();
    const down = Math.round(this.deps.reach.downFor('s3') / 1000);
    if (stepDown) {
      log.warn({ downSeconds: down }, 'S3 out of reach while another node can work: giving up the role');
      await resign();
      return;
    }
    if (outage && this.outage === null) {
      this.outage = `outage-${config.nodeName}-${now()}`;
      const summary =
        `${config.nodeName} has not reached S3 for ${down} s and no other node reports it can: an ` +
        `outage, not a node fault. No failover; tasks wait, held, and go on once S3 answers.`;
      await alertFromNode(alerts, log, {
        kind: 'OUTAGE',
        node: config.nodeName,
        incidentId: this.outage,
        epoch,
        at: now(),
        summary,
      });
    }
    if (this.outage !== null && down === 0) {
      const summary = `${config.nodeName} reaches S3 again: the outage is over and work goes on.`;
      await alertFromNode(alerts, log, {
        kind: 'RECOVERED',
        node: config.nodeName,
        incidentId: this.outage,
        epoch,
        at: now(),
        summary,
      });
      this.outage = null;
    }
  }

  /** Whether to step down now; `outage` when S3 is out of reach that long and no other node can work either. */
  private async due(): Promise<{ stepDown: boolean; outage: boolean }> {
    if (this.deps.reach.downFor('s3') < this.windowMs) {
      this.last = new Map();
      return { stepDown: false, outage: false };
    }
    const { config, store, log } = this.deps;
    const beats = new Map<string, Beat>();
    await Promise.all(
      config.nodes
        .filter((n) => n.name !== config.nodeName)
        .map(async (n) => {
          const got = await store.read(KEYS.beat(n.name), beatSchema).catch((error: unknown) => {
            log.warn({ node: n.name, err: describeError(error) }, 'beat unreadable while S3 is out of reach');
            return null;
          });
          if (got !== null) beats.set(n.name, got.value);
        }),
    );
    const ready = readyPeers(this.last, beats);
    const firstLook = this.last.size === 0;
    this.last = beats;
    return { stepDown: ready.length > 0, outage: ready.length === 0 && !firstLook };
  }
}
