import type { Behaviour } from './behaviour';
import type { Chance } from './chance';

interface Subscription {
  matches: (key: string) => boolean;
  deliver: (bucket: string, key: string) => void;
}

/**
 * S3 event notifications (docs/aws-behaviour.md: s3Notifications): every object created under a
 * subscription's filter is announced at least once, typically seconds later, sometimes a minute
 * or more, now and then twice, in no particular order. `lagMs` adds a fixed delay on top (the
 * drills' notification-lag fault).
 */
export class NotificationBus {
  private readonly subscriptions: Subscription[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  lagMs = 0;
  published = 0;
  delivered = 0;

  constructor(
    private readonly b: Behaviour['s3Notifications'],
    private readonly chance: Chance,
  ) {}

  subscribe(matches: (key: string) => boolean, deliver: (bucket: string, key: string) => void): void {
    this.subscriptions.push({ matches, deliver });
  }

  private delay(): number {
    if (!this.b.on) return this.lagMs;
    const late = this.chance.chance(this.b.lateShare);
    return (
      this.lagMs +
      (late
        ? this.chance.between(this.b.lateMinMs, this.b.lateMaxMs)
        : this.chance.between(this.b.typicalMinMs, this.b.typicalMaxMs))
    );
  }

  /** An object was created (the write was applied, whatever became of its response). */
  created(bucket: string, key: string): void {
    for (const s of this.subscriptions) {
      if (!s.matches(key)) continue;
      this.published++;
      const copies = this.b.on && this.chance.chance(this.b.duplicateRate) ? 2 : 1;
      for (let i = 0; i < copies; i++) {
        const wait = this.delay();
        if (wait <= 0) {
          this.delivered++;
          s.deliver(bucket, key);
          continue;
        }
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.delivered++;
          s.deliver(bucket, key);
        }, wait);
        this.timers.add(timer);
      }
    }
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
