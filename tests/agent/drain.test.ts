import { Drain } from '../../agent/worker/drain';
import type { RoleFile } from '../../agent/registry';

const primary = (draining?: boolean): RoleFile => ({
  role: 'primary',
  epoch: 4,
  validUntil: 1e12,
  boot: 'b',
  ...(draining === undefined ? {} : { draining }),
});

describe('Drain (a switchover drains the worker)', () => {
  it('starts once when the role file says so, and is done only with nothing in hand and no receive open', () => {
    const sigterm = new AbortController();
    const drain = new Drain(sigterm.signal);
    const started = jest.fn();
    let idle = false;
    expect(drain.check(primary(), () => true, started)).toBeNull();
    const before = drain.signal();
    expect(drain.check(primary(true), () => idle, started)).toBeNull();
    expect(started).toHaveBeenCalledTimes(1);
    // A task that started before the drain stops at its next checkpoint: its signal is aborted now.
    expect(before.aborted).toBe(true);
    idle = true;
    expect(drain.check(primary(true), () => idle, started)).toBe(4);
    expect(started).toHaveBeenCalledTimes(1);
  });

  it('ends when the request is withdrawn: tasks started afterwards run to their end, SIGTERM still drains them', () => {
    const sigterm = new AbortController();
    const drain = new Drain(sigterm.signal);
    drain.check(
      primary(true),
      () => false,
      () => undefined,
    );
    expect(drain.on).toBe(true);
    expect(
      drain.check(
        primary(),
        () => true,
        () => undefined,
      ),
    ).toBeNull();
    expect(drain.on).toBe(false);
    const after = drain.signal();
    expect(after.aborted).toBe(false);
    sigterm.abort();
    expect(after.aborted).toBe(true);
  });
});
