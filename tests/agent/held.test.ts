import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { HeldMessages, heldPath, stillInvisible } from '../../agent/worker/held';
import { bootId } from '../../agent/runtime/boot';
import { mono, wall } from '../../agent/runtime/clock';
import { memoryLogger } from '../helpers/memory-logger';

const VISIBILITY_MS = 300_000;
const MARGIN_MS = 30_000;

const msg = (receipt: string) => ({ id: `m-${receipt}`, receiptHandle: receipt, body: '{}', receiveCount: 1 });
const held = (receipt: string) => ({ receipt, id: `m-${receipt}`, body: '{}', receiveCount: 1 });
const receiptsLeft = async (dir: string): Promise<string[]> =>
  (await new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log).leftovers(MARGIN_MS)).messages
    .map((m) => m.message.receiptHandle)
    .sort();

describe('HeldMessages', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-held-'));
  });

  it(
    'gives the next worker what a worker that died still held, ' +
      'each message whole, and keeps each on disk until it is decided',
    async () => {
      const before = new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log);
      before.hold('t-1', msg('rh-1'), mono(), 2);
      before.hold('t-2', msg('rh-2'), mono(), 2);
      before.hold('t-3', msg('rh-3'), mono(), 2);
      before.release('t-2');
      await before.flushed();
      // The process dies here: nothing handed back. The next worker starts.
      const next = new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log);
      const left = await next.leftovers(MARGIN_MS);
      expect(left.sameBoot).toBe(true);
      expect(left.messages).toEqual(
        expect.arrayContaining([
          { taskId: 't-1', message: msg('rh-1'), epoch: 2 },
          { taskId: 't-3', message: msg('rh-3'), epoch: 2 },
        ]),
      );
      expect(left.messages).toHaveLength(2);
      // Should this worker die (or freeze) before deciding, the next one, and the heartbeat, still find both.
      expect((await receiptsLeft(dir)).sort()).toEqual(['rh-1', 'rh-3']);
      // Carried on under a new deadline, and handed back: each leaves the file as it is decided.
      next.hold('t-1', msg('rh-1'), mono(), 2);
      next.release('t-3');
      await next.flushed();
      expect(await receiptsLeft(dir)).toEqual(['rh-1']);
    },
  );

  it(
    'never gives out a message whose visibility may have run out: ' + 'SQS may have handed it to another consumer',
    async () => {
      const before = new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log);
      // Received 280 s ago: 20 s of visibility left, less than the margin.
      before.hold('t-old', msg('rh-old'), mono() - 280_000, 2);
      before.hold('t-new', msg('rh-new'), mono() - 10_000, 2);
      await before.flushed();
      expect(await receiptsLeft(dir)).toEqual(['rh-new']);
    },
  );

  it('after a reboot judges by the wall clock of this machine, since monotonic time restarted', async () => {
    const file = {
      version: 1,
      boot: `not-${bootId()}`,
      messages: {
        // A monotonic deadline far in the future means nothing after a reboot.
        a: { ...held('rh-a'), invisibleUntilMono: mono() + 10 * VISIBILITY_MS, invisibleUntilWall: wall() - 1 },
        b: { ...held('rh-b'), invisibleUntilMono: 0, invisibleUntilWall: wall() + 120_000 },
      },
    };
    writeFileSync(heldPath(dir), JSON.stringify(file));
    const left = await new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log).leftovers(MARGIN_MS);
    expect(left.sameBoot).toBe(false);
    expect(left.messages.map((m) => m.message.receiptHandle)).toEqual(['rh-b']);
    // Kept under this boot, its monotonic deadline taken from the wall clock's: a later worker
    // of this boot takes it up until then, not for ever.
    const kept = JSON.parse(readFileSync(heldPath(dir), 'utf8')) as {
      boot: string;
      messages: Record<string, { invisibleUntilMono: number }>;
    };
    expect(kept.boot).toBe(bootId());
    // (less the margin: the wall clock may have stepped across the reboot)
    expect(kept.messages.b.invisibleUntilMono - mono()).toBeGreaterThan(80_000);
    expect(kept.messages.b.invisibleUntilMono - mono()).toBeLessThanOrEqual(120_000 - MARGIN_MS);
  });

  it(
    'drops from the file a message whose visibility ran out: ' + 'no one may touch it through this file any more',
    async () => {
      const h = new HeldMessages(dir, VISIBILITY_MS, memoryLogger().log);
      h.hold('t-lapsed', msg('rh-lapsed'), mono() - VISIBILITY_MS - 1, 2);
      h.hold('t-live', msg('rh-live'), mono() - 1_000, 2);
      await h.flushed();
      expect(Object.keys((JSON.parse(readFileSync(heldPath(dir), 'utf8')) as { messages: object }).messages)).toEqual([
        't-live',
      ]);
      expect([...h.taskIds()]).toEqual(['t-live']);
    },
  );

  it('a damaged file gives nothing and stops nothing: its messages wait out their visibility', async () => {
    writeFileSync(heldPath(dir), '{"version":1,"boot":');
    const logger = memoryLogger();
    await expect(new HeldMessages(dir, VISIBILITY_MS, logger.log).leftovers(MARGIN_MS)).resolves.toMatchObject({
      messages: [],
    });
    expect(logger.text()).toContain('held messages unreadable');
    // It is replaced by an empty one.
    expect(JSON.parse(readFileSync(heldPath(dir), 'utf8'))).toMatchObject({ version: 1, messages: {} });
  });

  it(
    'stillInvisible: a message is handed back only with ' + 'more than the margin left, by the clock its boot allows',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 1e9 }),
          fc.integer({ min: -1e6, max: 1e6 }),
          fc.integer({ min: -1e6, max: 1e6 }),
          fc.integer({ min: 0, max: 1e5 }),
          fc.boolean(),
          (base, leftMono, leftWall, margin, sameBoot) => {
            const m = { ...held('r'), invisibleUntilMono: base + leftMono, invisibleUntilWall: base + leftWall };
            const left = sameBoot ? leftMono : leftWall;
            expect(stillInvisible(m, sameBoot, { mono: base, wall: base }, margin)).toBe(left > margin);
          },
        ),
      );
    },
  );
});
