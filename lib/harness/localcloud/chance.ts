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
