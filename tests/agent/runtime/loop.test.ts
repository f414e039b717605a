import { Loop } from '../../../agent/runtime/loop';

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

  it(
    'never runs again once stopped, even when stopped ' + 'in the middle of a round, and waits for that round',
    async () => {
      let runs = 0;
      let release: () => void = () => undefined;
      const loop = new Loop(
        100,
        () => {
          runs++;
          return new Promise<void>((resolve) => (release = resolve));
        },
        () => undefined,
      );
      loop.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(runs).toBe(1);
      let stopped = false;
      const stopping = loop.stop().then(() => (stopped = true));
      await jest.advanceTimersByTimeAsync(0);
      expect(stopped).toBe(false);
      release();
      await stopping;
      await jest.advanceTimersByTimeAsync(10_000);
      expect(runs).toBe(1);
      expect(jest.getTimerCount()).toBe(0);
    },
  );

  it('keeps going after a failed round, reporting the error', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const loop = new Loop(
      100,
      () => {
        runs++;
        return runs === 1 ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
      (e) => errors.push(e),
    );
    loop.start();
    await jest.advanceTimersByTimeAsync(250);
    await loop.stop();
    expect(runs).toBe(3);
    expect(errors).toEqual([new Error('boom')]);
  });
});
