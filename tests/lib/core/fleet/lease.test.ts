import fc from 'fast-check';
import {
  applyWrite,
  handoverFor,
  initialLease,
  mayConsume,
  nextEpoch,
  observeLeader,
  observeFailure,
  planSync,
  release,
  roleOf,
  type LeaseState,
  type LeaseTiming,
} from '../../../../lib/core/fleet/lease';
import type { Leader } from '../../../../lib/core/schemas';

const timing: LeaseTiming = { renewMs: 10_000, expiryMs: 30_000 };
const NODES = ['node-1', 'node-2', 'node-3'] as const;

/** A simulated fleet: one CAS register, three nodes with their own clock offsets. */
class Sim {
  t = 0;
  store: { leader: Leader | null; etag: string } = { leader: null, etag: 'v0' };
  private version = 0;
  readonly lease: Record<string, LeaseState>;
  readonly partitioned = new Set<string>();
  readonly dead = new Set<string>();
  readonly epochsWritten: number[] = [];
  readonly primaryOfEpoch = new Map<number, string>();
  readonly consumersByEpoch = new Map<number, Set<string>>();

  constructor(readonly offsets: Record<string, number>) {
    this.lease = Object.fromEntries(NODES.map((n) => [n, initialLease(this.mono(n))]));
  }

  mono(n: string): number {
    return this.t + (this.offsets[n] ?? 0);
  }

  cas(next: Leader, etag: string | null): string | null {
    if (etag !== this.store.etag && !(etag === null && this.store.leader === null)) return null;
    this.epochsWritten.push(next.epoch);
    expect(this.primaryOfEpoch.get(next.epoch) ?? next.primary).toBe(next.primary);
    this.primaryOfEpoch.set(next.epoch, next.primary);
    this.store = { leader: next, etag: `v${++this.version}` };
    return this.store.etag;
  }

  sync(n: string): void {
    if (this.dead.has(n)) return;
    if (this.partitioned.has(n)) {
      // Its read fails: time it cannot look through never counts towards an expiry.
      this.lease[n] = observeFailure(this.lease[n], this.mono(n));
      return;
    }
    const now = this.mono(n);
    let s = observeLeader(n, this.lease[n], this.store.leader, this.store.etag, now);
    s = release(s, now, timing);
    const rank = NODES.filter((m) => m !== s.leader?.primary).indexOf(n as (typeof NODES)[number]);
    const intent = planSync(n, s, now, { timing, rank: Math.max(0, rank), ready: true });
    if (intent.kind !== 'none') {
      const etag = this.cas(intent.next, intent.etag);
      s = applyWrite(n, s, intent, etag !== null, etag, now, now);
    }
    this.lease[n] = s;
  }

  /** The watchdog promotes `to` over a live (stalled) primary: the handover must wait. */
  watchdogPromote(to: string): void {
    const current = this.store.leader;
    if (current === null || current.primary === to) return;
    this.cas(nextEpoch(current, to, 'stalled', 'watchdog', 'await-fence'), this.store.etag);
  }

  /** The primary is confirmed dead: an immediate handover is safe. */
  killPrimaryAndPromote(to: string): void {
    const current = this.store.leader;
    if (current === null || current.primary === to || this.dead.has(to)) return;
    this.dead.add(current.primary);
    this.cas(nextEpoch(current, to, 'dead', 'watchdog', handoverFor(current, true)), this.store.etag);
  }

  /** The operator's first record: node-1 primary of epoch 1, then its first renewal. */
  bootstrap(): void {
    this.cas(nextEpoch(null, 'node-1', 'bootstrap', 'test', 'immediate'), null);
    this.sync('node-1');
  }

  consumers(): string[] {
    return NODES.filter(
      (n) => !this.dead.has(n) && mayConsume(roleOf(n, this.lease[n], this.mono(n), timing), this.mono(n)),
    );
  }

  check(): void {
    const now = this.consumers();
    expect(now.length).toBeLessThanOrEqual(1);
    for (const n of now) {
      const epoch = this.lease[n].leader!.epoch;
      const set = this.consumersByEpoch.get(epoch) ?? new Set();
      set.add(n);
      this.consumersByEpoch.set(epoch, set);
      expect(set.size).toBe(1);
    }
  }
}

// Syncs and clock advances dominate, as in a real fleet; promotions, partitions and deaths are rarer.
const step = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('sync' as const), node: fc.constantFrom(...NODES) }), weight: 5 },
  {
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 15_000 }) }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('partition' as const), node: fc.constantFrom(...NODES) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('promote' as const), node: fc.constantFrom(...NODES) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('kill' as const), node: fc.constantFrom(...NODES) }), weight: 1 },
);

describe('lease protocol', () => {
  it('never lets two nodes consume at once or in one epoch, and epochs never go back (property)', () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.integer({ min: -300_000, max: 300_000 }),
          fc.integer({ min: -300_000, max: 300_000 }),
          fc.integer({ min: -300_000, max: 300_000 }),
        ),
        fc.array(step, { minLength: 1, maxLength: 60 }),
        (offsets, steps) => {
          const sim = new Sim({ 'node-1': offsets[0], 'node-2': offsets[1], 'node-3': offsets[2] });
          if (steps.length % 2 === 0) sim.bootstrap();
          for (const s of steps) {
            if (s.kind === 'sync') sim.sync(s.node);
            else if (s.kind === 'advance') sim.t += s.ms;
            else if (s.kind === 'partition') {
              if (sim.partitioned.has(s.node)) sim.partitioned.delete(s.node);
              else sim.partitioned.add(s.node);
            } else if (s.kind === 'promote') sim.watchdogPromote(s.node);
            else sim.killPrimaryAndPromote(s.node);
            sim.check();
          }
          expect(sim.epochsWritten).toEqual([...sim.epochsWritten].sort((a, b) => a - b));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('does not hand over at once when the dead primary had not yet taken over from a live one', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    sim.watchdogPromote('node-3');
    sim.killPrimaryAndPromote('node-2');
    sim.sync('node-2');
    sim.check();
  });

  it('hands the lease to a standby after the primary goes silent, and to exactly one', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 123_456, 'node-3': -98_765 });
    sim.bootstrap();
    expect(sim.store.leader?.primary).toBe('node-1');
    for (let i = 0; i < 3; i++) {
      sim.t += 10_000;
      NODES.forEach((n) => sim.sync(n));
    }
    sim.dead.add('node-1');
    for (let i = 0; i < 6; i++) {
      sim.t += 10_000;
      NODES.forEach((n) => sim.sync(n));
      sim.check();
    }
    expect(sim.store.leader).toMatchObject({ primary: 'node-2', epoch: 2 });
    expect(sim.consumers()).toEqual(['node-2']);
  });

  it('keeps a primary through a blip shorter than its fence deadline', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    sim.partitioned.add('node-1');
    sim.t += 15_000;
    NODES.forEach((n) => sim.sync(n));
    expect(sim.consumers()).toEqual(['node-1']);
    sim.partitioned.delete('node-1');
    sim.sync('node-1');
    sim.t += 10_000;
    NODES.forEach((n) => sim.sync(n));
    expect(sim.store.leader?.epoch).toBe(1);
    expect(sim.consumers()).toEqual(['node-1']);
  });

  it('fences a primary that cannot renew before a standby can take over', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    NODES.forEach((n) => sim.sync(n));
    sim.partitioned.add('node-1');
    sim.t += 21_000;
    expect(roleOf('node-1', sim.lease['node-1'], sim.mono('node-1'), timing).role).toBe('fenced');
    expect(sim.consumers()).toEqual([]);
  });

  it('makes a primary promoted over a live one wait for a full expiry from when it first saw the epoch', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    sim.watchdogPromote('node-2');
    sim.sync('node-2');
    expect(roleOf('node-2', sim.lease['node-2'], sim.mono('node-2'), timing).role).toBe('pending');
    sim.t += 29_999;
    sim.sync('node-2');
    // node-1 could not renew over the new epoch and fenced itself; node-2 still waits.
    expect(sim.consumers()).toEqual([]);
    sim.t += 1;
    sim.sync('node-2');
    expect(sim.consumers()).toEqual(['node-2']);
  });

  it('counts the handover wait from when the new primary saw the version the promotion replaced', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 5_000, 'node-3': 0 });
    sim.bootstrap();
    NODES.forEach((n) => sim.sync(n));
    // node-2 saw renewal 1 of epoch 1; the primary then freezes and the watchdog promotes over that very version.
    sim.dead.add('node-1');
    sim.t += 20_000;
    sim.watchdogPromote('node-2');
    sim.sync('node-2');
    expect(roleOf('node-2', sim.lease['node-2'], sim.mono('node-2'), timing).role).toBe('pending');
    sim.t += 10_000;
    sim.sync('node-2');
    expect(sim.consumers()).toEqual(['node-2']);
  });

  it('counts from its first sight of the new epoch when it never saw the replaced version', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    NODES.forEach((n) => sim.sync(n));
    sim.t += 5_000;
    // A renewal node-2 never saw, then the promotion over it.
    sim.sync('node-1');
    sim.watchdogPromote('node-2');
    sim.t += 1_000;
    sim.sync('node-2');
    sim.t += 29_000;
    sim.sync('node-2');
    expect(roleOf('node-2', sim.lease['node-2'], sim.mono('node-2'), timing).role).toBe('pending');
    sim.t += 1_000;
    sim.sync('node-2');
    expect(sim.consumers()).toEqual(['node-2']);
  });

  it('does not take over after an S3 outage it could not see through, while the primary lives', () => {
    const sim = new Sim({ 'node-1': 0, 'node-2': 0, 'node-3': 0 });
    sim.bootstrap();
    NODES.forEach((n) => sim.sync(n));
    NODES.forEach((n) => sim.partitioned.add(n));
    for (let i = 0; i < 5; i++) {
      sim.t += 9_000;
      NODES.forEach((n) => sim.sync(n));
    }
    NODES.forEach((n) => sim.partitioned.delete(n));
    // Back after 45 s: the standbys read first, and find the same version as before the outage.
    ['node-2', 'node-3', 'node-1'].forEach((n) => sim.sync(n));
    expect(sim.store.leader).toMatchObject({ primary: 'node-1', epoch: 1 });
    sim.t += 10_000;
    NODES.forEach((n) => sim.sync(n));
    expect(sim.store.leader).toMatchObject({ primary: 'node-1', epoch: 1 });
    expect(sim.consumers()).toEqual(['node-1']);
  });
});
