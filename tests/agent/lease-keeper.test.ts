import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { LeaseKeeper } from '../../agent/lease-keeper';
import { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { emptyWatchdogState } from '../../lib/core/fleet/watchdog-state';
import type { Leader } from '../../lib/core/schemas';
import { memoryLogger } from '../helpers/memory-logger';
import { MemoryS3 } from '../helpers/memory-s3';

const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 2 },
  { name: 'node-3', instanceId: 'mi-00000000000000003', priority: 3 },
];
const LEADER: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 1,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const serverError = (): Error =>
  Object.assign(new Error('InternalError'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } });
const configFor = (nodeName: string) => ({
  ...buildConfig({}, { nodes: NODES }),
  nodeName,
  dataDir: mkdtempSync(join(tmpdir(), 'qf-lease-')),
});
const storeOf = (): StateStore =>
  new StateStore(new S3Client({ region: 'us-west-2' }), {
    bucket: 'b',
    prefix: 'peer-sync/',
    maxObjectBytes: 1 << 20,
    requestRetry: { attempts: 1, baseMs: 1, capMs: 1 },
  });

/**
 * LeaseKeeper rounds on a clock the test moves (defaults: renew 10 s, expiry 30 s), over the
 * memory S3. No timer runs: the agent's loop only calls round() when nextDelayMs says.
 */
describe('LeaseKeeper', () => {
  let s3: MemoryS3;
  let t: number;
  beforeEach(() => {
    latencyMs = 0;
    s3 = new MemoryS3();
    s3.set('peer-sync/leader.json', LEADER);
    t = 1_000_000;
  });
  afterAll(() => s3.restore());

  /** Every write of the record is answered `latencyMs` after it was sent, by the test's clock. */
  let latencyMs = 0;
  const keeper = (nodeName: string, reachable?: () => boolean) => {
    const config = configFor(nodeName);
    const store = storeOf();
    const replace = store.replace.bind(store);
    store.replace = async (...args: Parameters<StateStore['replace']>) => {
      const etag = await replace(...args);
      t += latencyMs;
      return etag;
    };
    return new LeaseKeeper({ config, store, log: memoryLogger().log, ready: () => true, clock: () => t, reachable });
  };
  const leader = (): Leader => s3.json('peer-sync/leader.json') as Leader;

  /** Rounds when the keeper asks for them, until `until`. */
  const runUntil = async (k: LeaseKeeper, until: number): Promise<void> => {
    for (let i = 0; i < 1000 && t < until; i++) {
      t = Math.min(until, t + Math.max(1, k.nextDelayMs()));
      await k.round();
    }
  };

  it('takes an unrenewed lease only after a full expiry by its own clock, plus a renewal period per rank', async () => {
    const second = keeper('node-2');
    const third = keeper('node-3');
    await second.round();
    await third.round();
    const start = t;
    // 30 s of no change: neither takes it yet (node-2 goes at 30 s, node-3 only at 40 s).
    await runUntil(second, start + 29_999);
    expect(leader().epoch).toBe(1);
    expect(second.current.role).toBe('standby');
    await runUntil(second, start + 35_000);
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2 });
    // node-3 sees the new epoch, not an expired one: it stays a standby.
    t = start + 41_000;
    await third.round();
    expect(third.current).toMatchObject({ role: 'standby', epoch: 2 });
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2 });
  });

  it('takes no lapsed lease while cordoned or while the fleet is paused, and reads only once a period', async () => {
    const maintenance = (m: object) =>
      s3.set('peer-sync/watchdog/state.json', { ...emptyWatchdogState(), maintenance: m });
    const note = { at: 0, by: 'ops@laptop', reason: null };
    maintenance({ paused: null, cordoned: { 'node-2': note } });
    const second = keeper('node-2');
    const third = keeper('node-3');
    const start = t;
    let rounds = 0;
    const counted = second.round.bind(second);
    second.round = async () => {
      rounds += 1;
      return counted();
    };
    await runUntil(second, start + 120_000);
    expect(leader().epoch).toBe(1);
    // A held takeover waits a read period (three quarters of a renewal) like any standby's look.
    expect(rounds).toBeLessThanOrEqual(120_000 / 7_500 + 1);
    await runUntil(third, t + 45_000);
    expect(leader()).toMatchObject({ primary: 'node-3', epoch: 2 });

    // Paused: nobody takes node-3's lapsed lease; resumed: node-2, no longer cordoned, does.
    maintenance({ paused: { ...note, until: null }, cordoned: {} });
    const from = t;
    await runUntil(second, from + 120_000);
    expect(leader()).toMatchObject({ primary: 'node-3', epoch: 2 });
    maintenance({ paused: null, cordoned: {} });
    await runUntil(second, from + 160_000);
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 3 });
  });

  it('takes a lapsed lease, when it cannot reach its stores, only after every node that can', async () => {
    const blind = keeper('node-2', () => false);
    const sighted = keeper('node-3');
    await blind.round();
    await sighted.round();
    const start = t;
    // node-3 goes at 40 s (its rank); node-2, first by priority, would wait until 60 s.
    while (t < start + 45_000) {
      t += 1_000;
      await blind.round();
      await sighted.round();
    }
    expect(leader()).toMatchObject({ primary: 'node-3', epoch: 2 });
    expect(blind.current.role).toBe('standby');
  });

  it('takes it all the same when no node that can reach its stores took it: behind every node, not never', async () => {
    const blind = keeper('node-2', () => false);
    await blind.round();
    const start = t;
    await runUntil(blind, start + 59_999);
    expect(leader().epoch).toBe(1);
    await runUntil(blind, start + 61_000);
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2 });
  });

  it('gives the role up at once when it resigns: fenced, no renewal, and the lease lapses to a standby', async () => {
    const primary = keeper('node-1');
    const standby = keeper('node-2');
    await primary.round();
    await standby.round();
    expect(primary.current.role).toBe('primary');
    const renewals = leader().renewals;
    expect((await primary.resign()).role).toBe('fenced');
    const start = t;
    while (t < start + 35_000) {
      t += 1_000;
      await primary.round();
      await standby.round();
      if (leader().primary === 'node-1') expect(leader().renewals).toBe(renewals);
      expect(primary.current.role).toBe('fenced');
    }
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2 });
    expect(standby.current.role).toBe('primary');
  });

  it('renews a renewal period after the last good renewal was sent: no latency under the margin fences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 9_000 }), async (latency) => {
        s3.set('peer-sync/leader.json', LEADER);
        const primary = keeper('node-1');
        await primary.round();
        latencyMs = latency;
        const sends: number[] = [];
        const end = t + 10 * 60_000;
        while (t < end) {
          // Just before the next round is due, the lease must still be valid.
          t += Math.max(0, primary.nextDelayMs() - 1);
          expect((await primary.publish()).role).toBe('primary');
          t += 1;
          sends.push(t);
          await primary.round();
          expect(primary.current.role).toBe('primary');
        }
        const gaps = sends.slice(1).map((s, i) => s - (sends[i] ?? 0));
        expect(new Set(gaps)).toEqual(new Set([10_000]));
      }),
      { numRuns: 25 },
    );
  });

  it('retries a failed renewal a quarter period later, not a whole period', async () => {
    const primary = keeper('node-1');
    await primary.round();
    s3.failNext(serverError());
    t += primary.nextDelayMs();
    await primary.round();
    expect(primary.nextDelayMs()).toBe(2_500);
  });

  it('drops the handover wait from its renewals once released, so its agent restarting resumes at once', async () => {
    const handedOver: Leader = { ...LEADER, primary: 'node-2', epoch: 2, previous: 'node-1', handover: 'await-fence' };
    s3.set('peer-sync/leader.json', handedOver);
    const first = keeper('node-2');
    await first.round();
    expect(first.current.role).toBe('pending');
    expect(leader().handover).toBe('await-fence');
    await runUntil(first, t + 31_000);
    expect(first.current.role).toBe('primary');
    expect(leader().handover).toBe('immediate');
    // The agent restarts: the new process reads its own record and consumes after one round.
    const restarted = keeper('node-2');
    await restarted.round();
    expect(restarted.current).toMatchObject({ role: 'primary', epoch: 2 });
  });

  it('consumes once a handover wait runs out by its own clock, between renewals, and does not spin', async () => {
    const k = keeper('node-2');
    await k.round(); // a standby: it sees the record of epoch 1 now
    t += 4_000;
    const handedOver: Leader = {
      ...LEADER,
      primary: 'node-2',
      epoch: 2,
      previous: 'node-1',
      handover: 'await-fence',
      replaces: { epoch: 1, renewals: 0 },
    };
    s3.set('peer-sync/leader.json', handedOver);
    await k.round();
    expect(k.current.role).toBe('pending');
    // The old lease lapses an expiry after this node saw its last version: 26 s from now, between
    // this node's renewals (due 10, 20 and 30 s from now). The agent's loop rounds only when a
    // renewal is due and otherwise publishes the role by the clock.
    const releaseAt = t + 26_000;
    const agentStep = () => (k.renewalDue() ? k.round() : k.publish());
    for (let i = 0; i < 50 && k.current.role !== 'primary'; i++) {
      t += Math.max(1, k.nextDelayMs());
      await agentStep();
    }
    expect(k.current.role).toBe('primary');
    expect(t).toBe(releaseAt);
    expect(k.nextDelayMs()).toBeGreaterThan(0);
  });

  it('fences a primary whose renewals fail at expiry less a renewal after its last good one was sent', async () => {
    const primary = keeper('node-1');
    // Its first round reads its own record and renews it; the next renews by CAS, without a read.
    await primary.round();
    t += 10_000;
    await primary.round();
    expect(leader().renewals).toBe(2);
    const sent = t;
    expect(primary.current).toMatchObject({ role: 'primary', epoch: 1 });
    // S3 refuses every write from now on.
    for (let i = 0; i < 10; i++) s3.failNext(serverError());
    t = sent + 10_000;
    await primary.round();
    t = sent + 19_999;
    await primary.publish();
    expect(primary.current.role).toBe('primary');
    t = sent + 20_000;
    await primary.publish();
    expect(primary.current.role).not.toBe('primary');
    expect(leader().renewals).toBe(2);
  });

  it("writes the record as planned, nothing more: an older agent's `beat` and `peers` are not carried on", async () => {
    const peers = { 'node-2': { boot: 'b2', seq: 3, quietMs: 0 } };
    s3.set('peer-sync/leader.json', { ...LEADER, beat: { boot: 'b1', seq: 12 }, peers });
    const primary = keeper('node-1');
    await primary.round();
    expect(leader()).toEqual({ ...LEADER, renewals: 1 });
    // A standby that takes the lease over writes none of them either.
    s3.set('peer-sync/leader.json', { ...LEADER, renewals: 6, beat: { boot: 'b1', seq: 12 }, peers });
    const standby = keeper('node-2');
    await standby.round();
    await runUntil(standby, t + 35_000);
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2, previous: 'node-1' });
    expect(leader()).not.toHaveProperty('beat');
    expect(leader()).not.toHaveProperty('peers');
  });

  it('renews at once over a record the watchdog rebuilt for it (same epoch, a new version)', async () => {
    const primary = keeper('node-1');
    await primary.round();
    const sent = t;
    expect(primary.current.role).toBe('primary');
    // leader.json is damaged, and the primary's renewals lose their race to it until it fences.
    s3.set('peer-sync/leader.json', '{"version":1,"primary":"node-1","epo\u0000 not json');
    for (let at = sent + 10_000; at <= sent + 20_000; at += 10_000) {
      t = at;
      await primary.round();
    }
    expect(primary.current.role).not.toBe('primary');
    // The watchdog rebuilds it: the same epoch, this node, renewals from 0 (lib/core/fleet/repair.ts).
    const rebuilt: Leader = { ...LEADER, renewals: 0, changedBy: 'watchdog', reason: 'rebuilt by the watchdog' };
    s3.set('peer-sync/leader.json', rebuilt);
    t = sent + 30_000;
    await primary.round();
    // One round: its renewal lost the race, it read the rebuilt record, and renewed over it.
    expect(leader()).toMatchObject({ primary: 'node-1', epoch: 1, renewals: 1 });
    expect(primary.current).toMatchObject({ role: 'primary', epoch: 1 });
  });

  it('tells of each damaged version of leader.json once, from the primary and from a standby', async () => {
    const told: Record<string, string[]> = { 'node-1': [], 'node-2': [] };
    const make = (name: 'node-1' | 'node-2') => {
      return new LeaseKeeper({
        config: configFor(name),
        store: storeOf(),
        log: memoryLogger().log,
        ready: () => true,
        clock: () => t,
        onDamaged: (detail) => told[name].push(detail),
      });
    };
    const primary = make('node-1');
    const standby = make('node-2');
    await primary.round();
    await standby.round();
    s3.set('peer-sync/leader.json', '{"version":1,"primary":"node-1","epo\u0000 not json');
    // The primary finds it on its next renewal (a lost race, then a read); the standby on its next read.
    // Later rounds add nothing.
    for (let i = 1; i <= 3; i++) {
      t += 10_000;
      await primary.round();
      await standby.round();
    }
    expect(told['node-1']).toHaveLength(1);
    expect(told['node-2']).toHaveLength(1);
    expect(told['node-1'][0]).toMatch(/leader\.json/);
    // Another damaged version is told again.
    s3.set('peer-sync/leader.json', 'garbage again');
    t += 10_000;
    await standby.round();
    expect(told['node-2']).toHaveLength(2);
  });

  it('does not renew at once over a record that moved to another epoch, even one naming it', async () => {
    const primary = keeper('node-1');
    await primary.round();
    const moved: Leader = { ...LEADER, epoch: 2, renewals: 0, handover: 'await-fence', changedBy: 'watchdog' };
    s3.set('peer-sync/leader.json', moved);
    t += 10_000;
    await primary.round();
    expect(leader()).toMatchObject({ epoch: 2, renewals: 0 });
  });
});
