import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rolePath, writeJsonAtomic } from '../../agent/registry';
import { bootId } from '../../agent/runtime/boot';
import { mono } from '../../agent/runtime/clock';
import { LeaseView } from '../../agent/worker/lease-view';

describe('LeaseView', () => {
  it(
    'refuses nothing under a live lease it had not yet re-read (a ' +
      'frozen worker thawing): the file decides, not its lapsed copy',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'qf-lease-view-'));
      const view = new LeaseView(dir, 'node-1');
      // Its copy lapsed while it was stopped…
      await writeJsonAtomic(rolePath(dir), { role: 'primary', epoch: 3, validUntil: mono() + 1_000, boot: bootId() });
      expect(await view.allowed()).toMatchObject({ epoch: 3 });
      await new Promise((r) => setTimeout(r, 1_100));
      expect(view.mayAct()).toBe(false);
      // …while its agent renewed the lease.
      await writeJsonAtomic(rolePath(dir), { role: 'primary', epoch: 3, validUntil: mono() + 60_000, boot: bootId() });
      expect(() => view.guard()).not.toThrow();
      expect(view.mayAct()).toBe(true);
    },
  );

  it('refuses once the file says the lease is gone, or names another boot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qf-lease-view-'));
    const view = new LeaseView(dir, 'node-1');
    await writeJsonAtomic(rolePath(dir), { role: 'fenced', epoch: 4, validUntil: 0, boot: bootId() });
    expect(() => view.guard()).toThrow(/node-1: no valid lease \(role fenced, epoch 4\)/);
    await writeJsonAtomic(rolePath(dir), {
      role: 'primary',
      epoch: 4,
      validUntil: mono() + 60_000,
      boot: 'another-boot',
    });
    expect(() => view.guard()).toThrow(/no valid lease/);
    expect(await view.allowed()).toBeNull();
  });
});
