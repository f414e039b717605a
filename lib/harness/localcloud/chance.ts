import { seededRandom } from '../../core/drill/workload';

/** Seeded randomness for the local cloud's behaviours: the same drill seed, the same faults. */
export class Chance {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** A number in [0, 1). */
  random(): number {
    return this.next();
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** Uniform in [min, max]. */
  between(min: number, max: number): number {
    return min + (Math.max(min, max) - min) * this.next();
  }

  /** An exponential draw with the given mean (gaps between independent events). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

/**
 * Bursts of refusals: they start at random (exponential gaps of mean `meanGapMs`) and last
 * `burstMs`; during one, a share `rate` of requests is refused (S3's SlowDown, DynamoDB's
 * throttling).
 */
export class Bursts {
  private nextBurstAt: number | null = null;
  private burstUntil = -Infinity;

  constructor(
    private readonly b: { on: boolean; meanGapMs: number; burstMs: number; rate: number },
    private readonly chance: Chance,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this request falls in a burst and is refused. */
  strikes(): boolean {
    if (!this.b.on) return false;
    const now = this.now();
    this.nextBurstAt ??= now + this.chance.exponential(this.b.meanGapMs);
    while (now >= this.nextBurstAt) {
      this.burstUntil = this.nextBurstAt + this.b.burstMs;
      this.nextBurstAt += this.b.burstMs + this.chance.exponential(this.b.meanGapMs);
    }
    return now < this.burstUntil && this.chance.chance(this.b.rate);
  }
}
