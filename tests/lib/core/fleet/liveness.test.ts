import fc from 'fast-check';
import type { NodeSpec } from '../../../../lib/core/config';
import { cannotWork, evidenceOf, newestSample, PROOF_INTERVALS, suspectWaitMs, readyStandbys, regainSight, updateSeen } from '../../../../lib/core/fleet/liveness';
import { emptyWatch, type NodeWatch } from '../../../../lib/core/fleet/watchdog-state';
import type { Heartbeat, Leader } from '../../../../lib/core/schemas';
import { heartbeat, sample } from '../../../helpers/fixtures';

const NOW = 1_800_000_000_000;
const leader: Leader = { version: 1, primary: 'node-1', epoch: 1, renewals: 0, reason: 't', changedBy: 't', previous: null, handover: 'immediate' };
const ZONES = ['eu-west-2a', 'eu-west-2b', undefined] as const;

/** Every standby ready: fresh, a live worker, the current epoch. */
const rank = (nodes: NodeSpec[]): string[] => {
  const heartbeats = new Map<string, Heartbeat>(nodes.map((n) => [n.name, heartbeat(n.name, [sample(0, { at: NOW })])]));
  const watches = Object.fromEntries(nodes.map((n) => [n.name, updateSeen(emptyWatch(), heartbeats.get(n.name), NOW)]));
  return readyStandbys(nodes, watches, heartbeats, leader, NOW, 15_000).map((n) => n.name);
};

const spec = (i: number, priority: number, zone: string | undefined): NodeSpec => ({ name: `node-${i}`, instanceId: `mi-${String(i).padStart(17, '0')}`, priority, ...(zone === undefined ? {} : { zone }) });

describe('readyStandbys', () => {
  it('passes over a standby whose worker exists but has not proved it works within PROOF_INTERVALS sample intervals', () => {
    const nodes = [spec(1, 1, undefined), spec(2, 1, undefined)];
    const ready = (proofAgeMs: number | null | undefined): string[] => {
      const heartbeats = new Map<string, Heartbeat>(nodes.map((n) => [n.name, heartbeat(n.name, [sample(0, { at: NOW, proofAgeMs })])]));
      const watches = Object.fromEntries(nodes.map((n) => [n.name, updateSeen(emptyWatch(), heartbeats.get(n.name), NOW)]));
      return readyStandbys(nodes, watches, heartbeats, leader, NOW, 15_000).map((n) => n.name);
    };
    expect(ready(0)).toEqual(['node-2']);
    expect(ready(PROOF_INTERVALS * 15_000)).toEqual(['node-2']);
    // A frozen worker stops proving; a failing one has no passing proof; an older agent names none.
    expect(ready(PROOF_INTERVALS * 15_000 + 1)).toEqual([]);
    expect(ready(null)).toEqual([]);
    expect(ready(undefined)).toEqual([]);
  });

  it('prefers, at equal priority, a standby outside the primary’s zone; priority still comes first (property)', () => {
    const fleet = fc.record({
      primaryZone: fc.constantFrom(...ZONES),
      standbys: fc.array(fc.record({ priority: fc.constantFrom(1, 2), zone: fc.constantFrom(...ZONES) }), { minLength: 1, maxLength: 5 }),
    });
    fc.assert(
      fc.property(fleet, ({ primaryZone, standbys }) => {
        const nodes = [spec(1, 1, primaryZone), ...standbys.map((s, i) => spec(i + 2, s.priority, s.zone))];
        const byName = new Map(nodes.map((n) => [n.name, n]));
        const ranked = rank(nodes).map((name) => byName.get(name) as NodeSpec);
        expect(ranked).toHaveLength(standbys.length);
        const same = (n: NodeSpec): boolean => primaryZone !== undefined && n.zone === primaryZone;
        for (let i = 1; i < ranked.length; i++) {
          const [a, b] = [ranked[i - 1], ranked[i]];
          expect(a.priority).toBeLessThanOrEqual(b.priority);
          if (a.priority === b.priority) expect(Number(same(a))).toBeLessThanOrEqual(Number(same(b)));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('picks the standby in another zone over a zone-mate of the primary that sorts first by name', () => {
    expect(rank([spec(1, 1, 'eu-west-2a'), spec(2, 5, 'eu-west-2a'), spec(3, 5, 'eu-west-2b')])).toEqual(['node-3', 'node-2']);
    // Without zones the order is priority, then name, as before.
    expect(rank([spec(1, 1, undefined), spec(2, 5, undefined), spec(3, 5, undefined)])).toEqual(['node-2', 'node-3']);
  });
});

describe('cannotWork', () => {
  it('names the standbys whose beat says they cannot reach S3 or SQS, and passes them over as failover targets', () => {
    const beats = new Map([
      ['node-2', { boot: 'b', seq: 4, unreachable: ['s3'] as const }],
      ['node-3', { boot: 'b', seq: 4, unreachable: ['dynamodb'] as const }],
      ['node-4', { boot: 'b', seq: 4 }],
    ]);
    expect([...cannotWork(beats)]).toEqual(['node-2']);
    const nodes = [spec(1, 1, undefined), spec(2, 1, undefined), spec(3, 2, undefined)];
    const heartbeats = new Map<string, Heartbeat>(nodes.map((n) => [n.name, heartbeat(n.name, [sample(0, { at: NOW })])]));
    const watches = Object.fromEntries(nodes.map((n) => [n.name, updateSeen(emptyWatch(), heartbeats.get(n.name), NOW)]));
    expect(readyStandbys(nodes, watches, heartbeats, leader, NOW, 15_000, cannotWork(beats)).map((n) => n.name)).toEqual(['node-3']);
  });
});

describe('regainSight', () => {
  it('takes from each node’s silence exactly the time it was not seen, never more than the silence; a known-silent node keeps its clock (property)', () => {
    fc.assert(
      fc.property(fc.nat(200_000), fc.oneof(fc.nat(200_000), fc.constant(Number.POSITIVE_INFINITY)), fc.boolean(), (silence, unseenFor, known) => {
        // Only an open incident's kind matters here: a lost standby is known silent.
        const incident = known ? ({ kind: 'standby' } as NodeWatch['incident']) : null;
        const watch: NodeWatch = { ...emptyWatch(), seen: { boot: 'b', seq: 3, at: NOW - silence }, incident };
        const after = regainSight({ 'node-1': watch }, NOW - unseenFor, NOW)['node-1'];
        expect(NOW - after.seen!.at).toBe(known ? silence : Math.max(0, silence - unseenFor));
      }),
    );
  });
});

describe("the primary's liveness by its lease renewals", () => {
  const hb = heartbeat('node-1', [sample(3), sample(4)], 'boot-1');
  const seen = (l: Leader | null, watch: NodeWatch = emptyWatch()) => updateSeen(watch, hb, NOW, evidenceOf(l, 'node-1')).seen;

  it('counts the sample a renewal carried when it is newer than the heartbeat, of the same agent boot', () => {
    expect(newestSample(hb, evidenceOf({ ...leader, beat: { boot: 'boot-1', seq: 9 } }, 'node-1').beats)).toEqual({ boot: 'boot-1', seq: 9 });
    expect(seen({ ...leader, beat: { boot: 'boot-1', seq: 9 } })).toEqual({ boot: 'boot-1', seq: 9, at: NOW });
    // Seen at seq 9 before: a later look at the same renewal is no news, and the silence runs on.
    const before: NodeWatch = { ...emptyWatch(), seen: { boot: 'boot-1', seq: 9, at: NOW - 40_000 } };
    expect(seen({ ...leader, beat: { boot: 'boot-1', seq: 9 } }, before)).toEqual(before.seen);
  });

  it('counts it while the heartbeat cannot be read (damaged: rewritten only with news), by the boot last seen', () => {
    const before: NodeWatch = { ...emptyWatch(), seen: { boot: 'boot-1', seq: 4, at: NOW - 20_000 } };
    expect(updateSeen(before, undefined, NOW, { beats: [{ boot: 'boot-1', seq: 6 }] }).seen).toEqual({ boot: 'boot-1', seq: 6, at: NOW });
    expect(updateSeen(before, undefined, NOW, { beats: [{ boot: 'boot-2', seq: 60 }] }).seen).toEqual(before.seen);
    expect(updateSeen(emptyWatch(), undefined, NOW, { beats: [{ boot: 'boot-1', seq: 6 }] }).seen).toBeNull();
  });

  it.each<[string, Leader | null]>([
    ['no lease record', null],
    ['a record without a beat (written by hand or by the watchdog)', leader],
    ["another boot's beat (an agent that restarted and has not written its heartbeat yet)", { ...leader, beat: { boot: 'boot-0', seq: 90 } }],
    ["another primary's record", { ...leader, primary: 'node-2', beat: { boot: 'boot-1', seq: 90 } }],
    ['an older sample than the heartbeat', { ...leader, beat: { boot: 'boot-1', seq: 2 } }],
  ])('goes by the heartbeat alone for %s', (_, l) => {
    expect(newestSample(hb, evidenceOf(l, 'node-1').beats)).toEqual({ boot: 'boot-1', seq: 4 });
  });
});

describe("a standby's liveness by its beat item and the primary's word", () => {
  const hb = heartbeat('node-2', [sample(3), sample(4)], 'boot-2');
  const beats = new Map([['node-2', { boot: 'boot-2', seq: 9 }]]);
  const claim = (seq: number, quietMs: number, boot = 'boot-2'): Leader => ({ ...leader, peers: { 'node-2': { boot, seq, quietMs } } });

  it('counts the beat item when it is newer than the heartbeat, of the same boot', () => {
    expect(updateSeen(emptyWatch(), hb, NOW, evidenceOf(leader, 'node-2', beats)).seen).toEqual({ boot: 'boot-2', seq: 9, at: NOW });
    expect(updateSeen(emptyWatch(), hb, NOW, evidenceOf(leader, 'node-2', new Map([['node-2', { boot: 'boot-9', seq: 90 }]]))).seen).toEqual({ boot: 'boot-2', seq: 4, at: NOW });
  });

  it('takes the newest sample of the lease and the beat item for a node that holds the lease', () => {
    const both = evidenceOf({ ...leader, primary: 'node-2', beat: { boot: 'boot-2', seq: 12 } }, 'node-2', beats);
    expect(newestSample(hb, both.beats)).toEqual({ boot: 'boot-2', seq: 12 });
  });

  it("dates the newest sample back by the primary's quiet time when the primary names that very sample", () => {
    expect(updateSeen(emptyWatch(), hb, NOW, evidenceOf(claim(9, 35_000), 'node-2', beats)).seen).toEqual({ boot: 'boot-2', seq: 9, at: NOW - 35_000 });
    // Seen longer ago by the watchdog itself: the earlier time stands.
    const before: NodeWatch = { ...emptyWatch(), seen: { boot: 'boot-2', seq: 9, at: NOW - 50_000 } };
    expect(updateSeen(before, hb, NOW, evidenceOf(claim(9, 35_000), 'node-2', beats)).seen).toEqual(before.seen);
  });

  it("dates a newer sample in the heartbeat back by the primary's word on an older one, less how long after it the node took the newer one", () => {
    // The beat said sample 8 (31 s quiet); the heartbeat holds sample 9, taken 15.5 s after 8 by the node's own monotonic clock.
    const later = (afterMs: number) => heartbeat('node-2', [{ ...sample(8), mono: 100_000 }, { ...sample(9), mono: 100_000 + afterMs }], 'boot-2');
    const word = evidenceOf(claim(8, 31_000), 'node-2', new Map([['node-2', { boot: 'boot-2', seq: 8 }]]));
    expect(updateSeen(emptyWatch(), later(15_500), NOW, word).seen).toEqual({ boot: 'boot-2', seq: 9, at: NOW - 15_500 });
    // Taken 40 s after it (the node was frozen in between, and heard since): no credit at all.
    expect(updateSeen(emptyWatch(), later(40_000), NOW, word).seen).toEqual({ boot: 'boot-2', seq: 9, at: NOW });
    // Without the node's own times (an older agent), nothing to go by either.
    expect(updateSeen(emptyWatch(), heartbeat('node-2', [sample(8), sample(9)], 'boot-2'), NOW, word).seen).toEqual({ boot: 'boot-2', seq: 9, at: NOW });
  });

  it.each<[string, Leader]>([
    ['an older sample than the beat item read now', claim(8, 60_000)],
    ['another boot', claim(9, 60_000, 'boot-1')],
    ['the lease holder itself', { ...claim(9, 60_000), primary: 'node-2' }],
  ])("ignores the primary's word about %s", (_, l) => {
    expect(updateSeen(emptyWatch(), hb, NOW, evidenceOf(l, 'node-2', beats)).seen?.at).toBe(NOW);
  });

  it('property: the word of the primary only ever moves the time of the newest sample back, never forward, and never changes the sample', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 12 }), (seenSeq, seenAgo, quietMs, claimSeq) => {
        const before: NodeWatch = { ...emptyWatch(), seen: { boot: 'boot-2', seq: seenSeq, at: NOW - seenAgo } };
        const without = updateSeen(before, hb, NOW, evidenceOf(leader, 'node-2', beats)).seen;
        const withWord = updateSeen(before, hb, NOW, evidenceOf(claim(claimSeq, quietMs), 'node-2', beats)).seen;
        expect(withWord?.seq).toBe(without?.seq);
        expect(withWord?.at).toBeLessThanOrEqual(without?.at ?? Infinity);
        if (claimSeq !== without?.seq) expect(withWord).toEqual(without);
        else expect(withWord?.at).toBe(Math.min(without.at, NOW - quietMs));
      }),
    );
  });
});

describe('suspectWaitMs', () => {
  const watch = (at: number): NodeWatch => ({ ...emptyWatch(), seen: { boot: 'boot-1', seq: 4, at } });
  const hbs = new Map([['node-1', heartbeat('node-1', [sample(4)], 'boot-1')], ['node-2', heartbeat('node-2', [sample(4)], 'boot-1')]]);
  const carrying = { ...leader, beat: { boot: 'boot-1', seq: 4 } };

  it('waits for a node one sample late until its silence is conclusive', () => {
    expect(suspectWaitMs({ 'node-2': watch(NOW - 20_000) }, hbs, NOW, 15_000, carrying, 10_000)).toBe(10_000);
  });

  it('waits a renewal period longer for a node the primary reports quiet for two intervals (the one whose lapsed lease it took over)', () => {
    const taken: Leader = { ...leader, primary: 'node-2', epoch: 2, previous: 'node-1', peers: { 'node-1': { boot: 'boot-1', seq: 3, quietMs: 30_500 } } };
    expect(suspectWaitMs({ 'node-1': watch(NOW - 12_000) }, hbs, NOW, 15_000, taken, 10_000)).toBe(18_000);
    expect(suspectWaitMs({ 'node-1': watch(NOW - 12_000) }, hbs, NOW, 15_000, { ...taken, peers: { 'node-1': { boot: 'boot-1', seq: 3, quietMs: 20_000 } } }, 10_000)).toBeNull();
    expect(suspectWaitMs({ 'node-1': watch(NOW - 4_000) }, hbs, NOW, 15_000, taken, 10_000)).toBeNull();
  });

  it("waits for a primary whose renewals carry its samples only a renewal period later: they come up to that much apart", () => {
    expect(suspectWaitMs({ 'node-1': watch(NOW - 20_000) }, hbs, NOW, 15_000, carrying, 10_000)).toBeNull();
    expect(suspectWaitMs({ 'node-1': watch(NOW - 27_000) }, hbs, NOW, 15_000, carrying, 10_000)).toBe(3_000);
    // Without a beat (an older agent, or one whose heartbeats S3 refused) it is judged by its heartbeat, as any node.
    expect(suspectWaitMs({ 'node-1': watch(NOW - 20_000) }, hbs, NOW, 15_000, leader, 10_000)).toBe(10_000);
  });
});
