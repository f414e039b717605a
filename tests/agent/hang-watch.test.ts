import { HangWatch } from '../../agent/worker/hang-watch';

describe('HangWatch', () => {
  const task = (lastProgress: number) => ({ abort: new AbortController(), lastProgress });

  it('finds a stage that did no work for the limit', () => {
    const watch = new HangWatch(100, 5_000);
    const idle = task(0);
    const busy = task(0);
    expect(watch.check([idle, busy], 4_900)).toEqual([]);
    busy.lastProgress = 5_000;
    expect(watch.check([idle, busy], 5_050).map((h) => h.run)).toEqual([idle]);
  });

  it('does not count time the worker itself was stopped: a frozen worker that thaws has no hung stage', () => {
    const watch = new HangWatch(100, 5_000);
    const run = task(0);
    expect(watch.check([run], 100)).toEqual([]);
    // The next tick comes 130 s late: the whole worker was stopped, its stage with it.
    expect(watch.check([run], 130_100)).toEqual([]);
    // Afterwards it counts again: no work for the limit after the thaw, tick by tick, is a hang.
    let hungAt: number | null = null;
    for (let now = 130_200; now <= 140_000 && hungAt === null; now += 100)
      if (watch.check([run], now).length > 0) hungAt = now;
    // All but two ticks of the late one were the pause (129.8 s): the stage last worked at 129.8 s, so 5 s later.
    expect(hungAt).toBe(134_800);
  });

  it('leaves alone a task already stopped', () => {
    const watch = new HangWatch(100, 5_000);
    const run = task(0);
    run.abort.abort();
    expect(watch.check([run], 10_000)).toEqual([]);
  });
});
