import { FAITHFUL } from '../../../../lib/harness/localcloud/behaviour';
import { Chance } from '../../../../lib/harness/localcloud/chance';
import { NotificationBus } from '../../../../lib/harness/localcloud/notifications';
import { S3Behaviour } from '../../../../lib/harness/localcloud/s3-behaviour';
import { LocalScheduler } from '../../../../lib/harness/localcloud/scheduler';

/** Randomness pinned to one side: `always` rolls every rare event, `never` none; ranges take their maximum. */
const pinned = (always: boolean): Chance =>
  ({
    random: () => 0.99,
    chance: (p: number) => always && p > 0,
    between: (_a: number, b: number) => b,
    exponential: (m: number) => m,
  }) as unknown as Chance;

describe('S3Behaviour (s3ConditionalConflict, s3LostResponse, s3SlowDownBursts)', () => {
  it('answers 409 to a failed precondition right after another write to the key, 412 later', () => {
    let now = 0;
    const s3 = new S3Behaviour(FAITHFUL, pinned(false), () => now);
    s3.wrote('k');
    now = FAITHFUL.s3ConditionalConflict.windowMs - 1;
    expect(s3.preconditionFailure('k')).toBe(409);
    expect(s3.preconditionFailure('other')).toBe(412);
    now = FAITHFUL.s3ConditionalConflict.windowMs;
    expect(s3.preconditionFailure('k')).toBe(412);
  });

  it('loses the response of a share of writes, as a reset or a 500', () => {
    const lossy = new S3Behaviour(FAITHFUL, new Chance(7));
    const outcomes = Array.from({ length: 20_000 }, () => lossy.loseResponse());
    const lost = outcomes.filter((o) => o !== null).length / outcomes.length;
    expect(lost).toBeGreaterThan(FAITHFUL.s3LostResponse.rate * 0.7);
    expect(lost).toBeLessThan(FAITHFUL.s3LostResponse.rate * 1.3);
    expect(new Set(outcomes)).toEqual(new Set([null, 'reset', 'internal-error']));
  });

  it('refuses requests only inside a SlowDown burst', () => {
    let now = 0;
    const s3 = new S3Behaviour(FAITHFUL, pinned(true), () => now);
    // Bursts start a mean gap apart (the pinned draw) and last burstMs.
    expect(s3.slowDown()).toBe(false);
    now = FAITHFUL.s3SlowDownBursts.meanGapMs + 1;
    expect(s3.slowDown()).toBe(true);
    now += FAITHFUL.s3SlowDownBursts.burstMs;
    expect(s3.slowDown()).toBe(false);
  });
});

describe('NotificationBus (s3Notifications)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('delivers a matching notification late, sometimes twice, and the lag fault on top', () => {
    const got: number[] = [];
    const bus = new NotificationBus(FAITHFUL.s3Notifications, pinned(true));
    bus.subscribe(
      (k) => k.endsWith('heartbeat.json'),
      () => got.push(Date.now()),
    );
    bus.lagMs = 60_000;
    const start = Date.now();
    bus.created('b', 'nodes/node-1/heartbeat.json');
    bus.created('b', 'tasks/t/done.json');
    jest.advanceTimersByTime(60_000 + FAITHFUL.s3Notifications.lateMaxMs - 1);
    expect(got).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(got.map((t) => t - start)).toEqual([
      60_000 + FAITHFUL.s3Notifications.lateMaxMs,
      60_000 + FAITHFUL.s3Notifications.lateMaxMs,
    ]);
  });
});

describe('LocalScheduler (lambdaAsync, eventBridgeSchedule)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('retries an invocation that threw a minute later, then two minutes after that, and no more', async () => {
    const calls: number[] = [];
    const start = Date.now();
    const sched = new LocalScheduler(
      () => {
        calls.push(Date.now() - start);
        return Promise.reject(new Error('boom'));
      },
      60_000,
      () => undefined,
      FAITHFUL,
      pinned(false),
    );
    sched.enqueue({}, 'direct');
    for (let i = 0; i < 400; i++) {
      jest.advanceTimersByTime(1_000);
      await Promise.resolve();
      await Promise.resolve();
    }
    const q = FAITHFUL.lambdaAsync.queueMaxMs;
    expect(calls).toEqual([q, q + 60_000, q + 180_000]);
    await sched.stop();
  });

  it('delivers some events twice, and runs the schedule once per period at a point within it', async () => {
    const calls: string[] = [];
    const sched = new LocalScheduler(
      (e) => {
        calls.push((e as { source?: string }).source ?? 'event');
        return Promise.resolve();
      },
      60_000,
      () => undefined,
      FAITHFUL,
      pinned(true),
    );
    sched.enqueue({}, 'direct');
    sched.start();
    jest.advanceTimersByTime(FAITHFUL.lambdaAsync.queueMaxMs);
    expect(calls).toEqual(['event', 'event']);
    // The pinned draw puts each run at the end of its period, plus the target's delay.
    jest.advanceTimersByTime(
      60_000 + FAITHFUL.eventBridgeSchedule.targetDelayMaxMs - FAITHFUL.lambdaAsync.queueMaxMs - 1,
    );
    expect(calls.filter((c) => c === 'aws.events')).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(calls.filter((c) => c === 'aws.events')).toHaveLength(1);
    await sched.stop();
  });

  it('ends a run that died at the function timeout, retries it as one that threw, and frees its place', async () => {
    const calls: number[] = [];
    const errors: string[] = [];
    const start = Date.now();
    let after = 0;
    const sched: LocalScheduler = new LocalScheduler(
      async () => {
        calls.push(Date.now() - start);
        await sched.hang();
        after++;
      },
      60_000,
      (error) => errors.push(String(error)),
      FAITHFUL,
      pinned(false),
      1,
      60_000,
    );
    sched.enqueue({}, 'direct');
    const q = FAITHFUL.lambdaAsync.queueMaxMs;
    for (let i = 0; i < 400; i++) {
      jest.advanceTimersByTime(1_000);
      await Promise.resolve();
      await Promise.resolve();
      await Promise.resolve();
    }
    // Ended at 60 s each time (the only slot frees), retried a minute and then two minutes later.
    expect(calls).toEqual([q, q + 120_000, q + 300_000]);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/Task timed out/);
    expect(after).toBe(0);
    // A second event is not kept waiting behind the dead ones.
    sched.enqueue({}, 'direct');
    jest.advanceTimersByTime(q);
    expect(calls).toHaveLength(4);
    // Stopping ends the one still hung at once (no timer runs here), without reporting it.
    await sched.stop();
    expect(errors).toHaveLength(3);
  });
});
