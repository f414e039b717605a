import type { z } from 'zod';
import { PeerWatch } from '../../agent/peer-watch';
import type { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { memoryLogger } from '../helpers/memory-logger';

const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 1 },
  { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 2 },
  { name: 'node-3', instanceId: 'mi-00000000000000003', priority: 3 },
];
const BEAT = (node: string): string => `nodes/${node}/beat`;

/** The items PeerWatch reads (it only reads), and the keys whose reads fail. */
class Items {
  readonly values = new Map<string, unknown>();
  readonly failing = new Set<string>();
  set(key: string, value: unknown): void {
    this.values.set(key, value);
  }
  readonly store = {
    read: async <S extends z.ZodType>(key: string, schema: S): Promise<{ value: z.output<S>; etag: string } | null> => {
      await Promise.resolve();
      if (this.failing.has(key)) throw Object.assign(new Error('InternalServerError'), { name: 'InternalServerError' });
      const v = this.values.get(key);
      return v === undefined ? null : { value: schema.parse(v), etag: '"e"' };
    },
  } as unknown as StateStore;
}

/** The primary's watch on the standbys' beats, over items in memory and a clock the test moves. */
describe('PeerWatch', () => {
  let s3: Items;
  let t: number;
  beforeEach(() => {
    s3 = new Items();
    t = 1_000_000;
  });

  const watch = () => {
    const config = { ...buildConfig({}, { nodes: NODES }), nodeName: 'node-1' };
    const store = s3.store;
    // Each clock reading moves it half a second: a read is sent at t and answered at t + 0.5 s.
    return new PeerWatch({ config, store, log: memoryLogger().log, clock: () => (t += 500) });
  };

  it("times how long each standby's newest sample has not changed, from the read that saw it to the last read that still did", async () => {
    const w = watch();
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2', seq: 7 });
    s3.set(BEAT('node-3'), { version: 1, boot: 'b3', seq: 1 });
    await w.observe();
    expect(w.report()).toEqual({ 'node-2': { boot: 'b2', seq: 7, quietMs: 0 }, 'node-3': { boot: 'b3', seq: 1, quietMs: 0 } });
    t += 10_000;
    s3.set(BEAT('node-3'), { version: 1, boot: 'b3', seq: 2 });
    await w.observe();
    const report = w.report();
    // node-2 unchanged: at least the renewal period, never more than the reads prove.
    expect(report?.['node-2']?.quietMs).toBeGreaterThanOrEqual(9_000);
    expect(report?.['node-2']?.quietMs).toBeLessThanOrEqual(11_000);
    expect(report?.['node-3']).toEqual({ boot: 'b3', seq: 2, quietMs: 0 });
  });

  it('tells of a quiet standby once per quiet spell, and again after it was heard and went quiet again', async () => {
    const w = watch();
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2', seq: 7 });
    const spell = async (): Promise<string[][]> => {
      const told: string[][] = [];
      for (let i = 0; i < 5; i++) {
        await w.observe();
        told.push(w.newlyQuiet(w.report() ?? null, 30_000));
        t += 10_000;
      }
      return told;
    };
    expect((await spell()).flat()).toEqual(['node-2']);
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2', seq: 8 });
    expect((await spell()).flat()).toEqual(['node-2']);
  });

  it('goes on from a lapsed lease it took over: the old primary stays quiet while its beat item is absent or older, until it is heard', async () => {
    const w = watch();
    w.seed({ node: 'node-2', boot: 'b2', seq: 9, quietMs: 31_000 });
    expect(w.report()).toEqual({ 'node-2': { boot: 'b2', seq: 9, quietMs: 31_000 } });
    // No beat item (a primary writes none), then one from before it became primary: still quiet, and longer.
    t += 10_000;
    await w.observe();
    expect(w.report()?.['node-2']?.quietMs).toBeGreaterThanOrEqual(40_000);
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2', seq: 4 });
    t += 10_000;
    await w.observe();
    expect(w.report()?.['node-2']?.quietMs).toBeGreaterThanOrEqual(50_000);
    // A newer sample, or another boot's (its agent restarted): heard, quiet from now.
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2-new', seq: 0 });
    t += 10_000;
    await w.observe();
    expect(w.report()).toEqual({ 'node-2': { boot: 'b2-new', seq: 0, quietMs: 0 } });
    // Once heard, an absent item leaves it out again, as for any standby.
    s3.values.delete(BEAT('node-2'));
    await w.observe();
    expect(w.report()).toBeUndefined();
  });

  it("adds nothing to a standby's quiet time for reads that fail, and leaves out one it never read", async () => {
    const w = watch();
    s3.set(BEAT('node-2'), { version: 1, boot: 'b2', seq: 7 });
    await w.observe();
    s3.failing.add(BEAT('node-2'));
    for (let i = 0; i < 4; i++) {
      t += 10_000;
      await w.observe();
    }
    // Every read of node-2 since failed (node-3 has no beat at all): its quiet time is still the first read's.
    expect(w.report()).toEqual({ 'node-2': { boot: 'b2', seq: 7, quietMs: 0 } });
    w.reset();
    expect(w.report()).toBeUndefined();
  });
});
