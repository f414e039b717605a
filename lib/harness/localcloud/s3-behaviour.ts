import type { Behaviour } from './behaviour';
import { Bursts, type Chance } from './chance';

/** How a PUT that was applied loses its response. */
export type LostResponse = 'reset' | 'internal-error';

/**
 * The S3 behaviours AWS documents and fauxqs does not have (docs/aws-behaviour.md):
 * 409 ConditionalRequestConflict for conditional writes that race another write to the key,
 * writes that are applied and then lose their response, and bursts of 503 SlowDown.
 */
export class S3Behaviour {
  private readonly lastWrite = new Map<string, number>();
  private readonly bursts: Bursts;

  constructor(
    private readonly b: Pick<Behaviour, 's3ConditionalConflict' | 's3LostResponse' | 's3SlowDownBursts'>,
    private readonly chance: Chance,
    private readonly now: () => number = Date.now,
  ) {
    this.bursts = new Bursts(b.s3SlowDownBursts, chance, now);
  }

  /** A write to `key` was applied now. */
  wrote(key: string): void {
    this.lastWrite.set(key, this.now());
  }

  /** The answer to a conditional PUT whose precondition failed: 409 while another write to the key is recent. */
  preconditionFailure(key: string): 409 | 412 {
    const c = this.b.s3ConditionalConflict;
    const last = this.lastWrite.get(key);
    return c.on && last !== undefined && this.now() - last < c.windowMs ? 409 : 412;
  }

  /** Whether this PUT, once applied, loses its response, and how. */
  loseResponse(): LostResponse | null {
    const l = this.b.s3LostResponse;
    if (!l.on || !this.chance.chance(l.rate)) return null;
    return this.lostHow();
  }

  /** How a response is lost: the connection reset, or a 500 after the write was applied (both seen from S3). */
  lostHow(): LostResponse {
    return this.chance.chance(this.b.s3LostResponse.resetShare) ? 'reset' : 'internal-error';
  }

  /** True when this request falls in a SlowDown burst and is refused. */
  slowDown(): boolean {
    return this.bursts.strikes();
  }
}
