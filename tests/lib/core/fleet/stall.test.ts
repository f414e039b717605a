import fc from 'fast-check';
import { advanceCounter, emptyCounter, isStalled, judgeSample } from '../../../../lib/core/fleet/stall';
import type { Sample } from '../../../../lib/core/schemas';
import { frozen, sample, working } from '../../../helpers/fixtures';

describe('judgeSample', () => {
  it.each([
    ['no worker process is alive', sample(0), sample(1, { workerProcesses: 0 }), 'no-worker'],
    [
      'backlog steady, no completion, no progress',
      sample(0, { inFlight: [{ taskId: 't', progress: 3 }] }),
      sample(1, { inFlight: [{ taskId: 't', progress: 3 }] }),
      'no-progress',
    ],
    ['backlog growing, nothing moves', sample(0, { backlog: 3 }), sample(1, { backlog: 9 }), 'no-progress'],
    [
      'a long task advances with zero completions',
      sample(0, { inFlight: [{ taskId: 't', progress: 3 }] }),
      sample(1, { inFlight: [{ taskId: 't', progress: 4 }] }),
      null,
    ],
    [
      'the stage process used CPU time',
      sample(0, { inFlight: [{ taskId: 't', progress: 3, stageCpuMs: 100 }] }),
      sample(1, { inFlight: [{ taskId: 't', progress: 3, stageCpuMs: 900 }] }),
      null,
    ],
    ['a task completed', sample(0, { completedTotal: 4 }), sample(1, { completedTotal: 5 }), null],
    ['the backlog shrank', sample(0, { backlog: 6 }), sample(1, { backlog: 5 }), null],
    ['empty queue and an idle worker', sample(0, { backlog: 0 }), sample(1, { backlog: 0 }), null],
    ['a new task started', sample(0), sample(1, { inFlight: [{ taskId: 't2', progress: 0 }] }), null],
    ['the backlog could not be read', sample(0), sample(1, { backlog: null }), null],
    [
      'a worker that may not consume waits (lease lapsed or not released)',
      sample(0),
      sample(1, { consumingEpoch: null, mayConsume: false }),
      null,
    ],
    [
      'an older agent names no lease: a worker that does not consume waits',
      sample(0),
      sample(1, { consumingEpoch: null }),
      null,
    ],
    [
      'a worker that does not consume while its agent holds a valid lease is stuck (hung before its first poll)',
      sample(0, { consumingEpoch: null, mayConsume: true }),
      sample(1, { consumingEpoch: null, mayConsume: true }),
      'no-progress',
    ],
  ] as const)('judges %s', (_name, prev, cur, expected) => {
    expect(judgeSample(prev, cur)).toBe(expected);
  });

  it('needs a previous sample to call anything but a missing worker a failure', () => {
    expect(judgeSample(undefined, sample(0))).toBeNull();
    expect(judgeSample(undefined, sample(0, { workerProcesses: 0 }))).toBe('no-worker');
  });
});

describe('advanceCounter', () => {
  it('declares a stall after 8 failing samples', () => {
    const c = advanceCounter(emptyCounter(), 'b', frozen(0, 9));
    expect(c.failing).toBe(8);
    expect(isStalled(c, 8)).toBe(true);
  });

  it('is not stalled after 7 failing samples', () => {
    const c = advanceCounter(emptyCounter(), 'b', frozen(0, 8));
    expect(c.failing).toBe(7);
    expect(isStalled(c, 8)).toBe(false);
  });

  it('resets the counter when 7 failing samples are followed by a healthy one', () => {
    const samples = [...frozen(0, 8), sample(8, { inFlight: [{ taskId: 'task-0001', progress: 8 }] })];
    const c = advanceCounter(emptyCounter(), 'b', samples);
    expect(c.failing).toBe(0);
    expect(c.healthy).toBe(1);
  });

  it('counts a missing worker as failing from the first sample', () => {
    const c = advanceCounter(
      emptyCounter(),
      'b',
      Array.from({ length: 8 }, (_, i) => sample(i, { workerProcesses: 0 })),
    );
    expect(isStalled(c, 8)).toBe(true);
    expect(c.lastFault).toBe('no-worker');
  });

  it('keeps a long task that advances without completing healthy', () => {
    expect(advanceCounter(emptyCounter(), 'b', working(0, 30)).failing).toBe(0);
  });

  it.each<[string, Partial<Sample>]>([
    ['a fenced worker (its lease lapsed)', { consumingEpoch: null, mayConsume: false }],
    ['an unread backlog', { backlog: null }],
    ['a node that cannot reach S3', { unreachable: ['s3'] }],
  ])(
    'neither fails nor clears the count on a sample of %s: 7 failing, then such samples, then one failing is a stall',
    (_, over) => {
      const samples = [...frozen(0, 8), ...frozen(8, 4).map((s) => ({ ...s, ...over })), ...frozen(12, 1)];
      const c = advanceCounter(emptyCounter(), 'b', samples);
      expect(c.failing).toBe(8);
      expect(c.healthy).toBe(0);
    },
  );

  it('does not count a missing sample as failing', () => {
    const samples = frozen(0, 9).filter((s) => s.seq !== 4);
    expect(advanceCounter(emptyCounter(), 'b', samples).failing).toBe(7);
  });

  it('judges each sample once however often a heartbeat is re-read (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        (healthy, repeats) => {
          const samples = healthy.map((h, i) => sample(i, { inFlight: [{ taskId: 't', progress: h ? i : 0 }] }));
          const once = advanceCounter(emptyCounter(), 'b', samples);
          let again = emptyCounter();
          // Overlapping windows of the same samples, each delivered `repeats` times.
          for (let end = 1; end <= samples.length; end++)
            for (let r = 0; r < repeats; r++)
              again = advanceCounter(again, 'b', samples.slice(Math.max(0, end - 16), end));
          expect(again).toEqual(once);
        },
      ),
    );
  });

  it('starts a fresh baseline when the agent reboots, without forgetting the failing run', () => {
    const before = advanceCounter(emptyCounter(), 'boot-1', frozen(0, 5));
    const after = advanceCounter(before, 'boot-2', [sample(0, { workerProcesses: 0 })]);
    expect(after.failing).toBe(before.failing + 1);
    expect(after.boot).toBe('boot-2');
  });
});
