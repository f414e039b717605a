import { Loop } from '../../lib/loop';

describe('Loop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('keeps its period on the monotonic clock: a wall-clock step of minutes changes no interval', async () => {
    let mono = 0;
    const runs: number[] = [];
    const loop = new Loop(
      1_000,
      () => {
        runs.push(mono);
        mono += 300;
        // The wall clock jumps ten minutes back in the middle of a round (an NTP step).
        jest.setSystemTime(Date.now() - 600_000);
        return Promise.resolve();
      },
      () => undefined,
      () => mono,
    );
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 2; i++) {
      // 699 ms later nothing has run yet; at 700 ms (1 s after the round began) the next does.
      mono += 699;
      await jest.advanceTimersByTimeAsync(699);
      expect(runs).toHaveLength(i + 1);
      mono += 1;
      await jest.advanceTimersByTimeAsync(1);
    }
    await loop.stop();
    // Each round starts 700 ms after the previous one ended: 1 s apart by the monotonic clock.
    expect(runs).toEqual([0, 1_000, 2_000]);
  });

  it('asks a function for the delay after each round', async () => {
    const delays = [50, 500, 5];
    const runs: number[] = [];
    const loop = new Loop(
      () => delays.shift() ?? 10_000,
      () => {
        runs.push(Date.now());
        return Promise.resolve();
      },
      () => undefined,
    );
    const start = Date.now();
    loop.start();
    await jest.advanceTimersByTimeAsync(600);
    await loop.stop();
    expect(runs.map((t) => t - start)).toEqual([0, 50, 550, 555]);
  });
});
