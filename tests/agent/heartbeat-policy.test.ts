import fc from 'fast-check';
import { heartbeatDue, newsOf, type DueInput, type Written } from '../../agent/heartbeat-policy';
import { advanceCounter, emptyCounter, type StallCounter } from '../../lib/core/fleet/stall';
import type { Sample } from '../../lib/core/schemas';
import { sample } from '../helpers/fixtures';

const SAMPLE_MS = 15_000;
const KEEP_ALIVE_MS = 300_000;
const WINDOW = 16;
const RECOVERY = 2;

const base = (over: Partial<DueInput> = {}): DueInput => {
  const samples = [sample(0, { backlog: 0 }), sample(1, { backlog: 0 })];
  return {
    role: { role: 'primary', epoch: 1 },
    samples,
    last: { role: 'primary', epoch: 1, news: newsOf(samples[1], SAMPLE_MS), at: 0 },
    unsent: 0,
    now: 15_000,
    keepAliveMs: KEEP_ALIVE_MS,
    recoverySamples: RECOVERY,
    sampleMs: SAMPLE_MS,
    ...over,
  };
};

describe('heartbeatDue', () => {
  it('leaves a healthy primary to its lease between keep-alives', () => {
    expect(heartbeatDue(base())).toBeNull();
  });

  /** An idle primary's two samples, the newest with `over`. */
  const idleThen = (over: Partial<Sample>): Sample[] => [sample(0, { backlog: 0 }), sample(1, { backlog: 0, ...over })];
  const restarted = [
    sample(0, { backlog: 0, worker: 'a' }),
    sample(1, { backlog: 0, worker: 'b' }),
    sample(2, { backlog: 0, worker: 'b' }),
  ];
  const afterFailing = [sample(0), sample(1), sample(2, { completedTotal: 1, backlog: 0 })];
  it.each<[string, Partial<DueInput>, string]>([
    ['nothing written yet', { last: null }, 'first'],
    ['a write that failed', { unsent: 1 }, 'unsent'],
    ["a restarted worker's first samples", { samples: restarted }, 'failing'],
    ['a new epoch', { role: { role: 'primary', epoch: 2 } }, 'role'],
    ['a store found unreachable', { samples: idleThen({ unreachable: ['s3'] }) }, 'news'],
    ['a failing sample', { samples: [sample(0), sample(1)] }, 'failing'],
    ['a sample after a failing one', { samples: afterFailing }, 'failing'],
    ['a completion', { samples: idleThen({ completedTotal: 1 }) }, 'news'],
    ['the keep-alive', { now: KEEP_ALIVE_MS }, 'keep-alive'],
  ])('writes for %s', (_, over, reason) => {
    expect(heartbeatDue(base(over))).toBe(reason);
  });

  const standby = (over: Partial<DueInput> = {}): DueInput => {
    const samples = [sample(0, { backlog: null }), sample(1, { backlog: null })];
    const last: Written = { role: 'standby', epoch: 1, news: newsOf(samples[1], SAMPLE_MS), at: 0 };
    return base({ role: { role: 'standby', epoch: 1 }, samples, last, ...over });
  };

  it('leaves a ready standby to its beats between keep-alives', () => {
    expect(heartbeatDue(standby())).toBeNull();
  });

  /** A ready standby's two samples, the newest with `over`. */
  const readyThen = (over: Partial<Sample>): Sample[] => [
    sample(0, { backlog: null }),
    sample(1, { backlog: null, ...over }),
  ];
  const unreadyThenReady = [
    sample(0, { backlog: null, workerProcesses: 0, worker: null }),
    sample(1, { backlog: null }),
  ];
  it.each<[string, Partial<DueInput>, string]>([
    ['a worker gone', { samples: readyThen({ workerProcesses: 0, worker: null }) }, 'failing'],
    ['a worker not proven lately', { samples: readyThen({ proofAgeMs: 10 * SAMPLE_MS }) }, 'failing'],
    ['a ready sample after an unready one', { samples: unreadyThenReady }, 'failing'],
    ['a new epoch seen', { samples: readyThen({ epochSeen: 9 }) }, 'news'],
    ['the keep-alive', { now: KEEP_ALIVE_MS }, 'keep-alive'],
  ])('writes for a standby with %s', (_, over, reason) => {
    expect(heartbeatDue(standby(over))).toBe(reason);
  });

  it("does not count a sample's time, CPU, memory, task progress or lease left as news", () => {
    const task = { taskId: 't', progress: 1, stage: 'transcode' };
    const a = sample(1, { backlog: 2, inFlight: [task], leaseLeftMs: 20_000 });
    const b = sample(2, {
      at: a.at + 15_000,
      cpuPercent: 90,
      memoryBytes: 9e8,
      backlog: 2,
      inFlight: [{ ...task, progress: 7 }],
      leaseLeftMs: 5_000,
      syncMs: 40,
    });
    expect(newsOf(b, SAMPLE_MS)).toBe(newsOf(a, SAMPLE_MS));
    const titling = { ...b, inFlight: [{ ...task, progress: 7, stage: 'titling' }] };
    expect(newsOf(titling, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
    expect(newsOf({ ...b, proofAgeMs: 10 * SAMPLE_MS }, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
    expect(newsOf({ ...b, unreachable: ['s3'] }, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
  });
});

/** What the primary's worker does between two samples. */
type Step = { kind: 'idle' | 'busy' | 'stuck' | 'dead' | 'done' | 'restart'; writeOk: boolean };

/**
 * A primary's run: its samples and which of them the policy writes (and S3 takes); beside it,
 * the watchdog's stall counter fed with every sample (as if every heartbeat were written) and
 * one fed only with the heartbeats written.
 */
const simulate = (steps: readonly Step[]) => {
  const window: Sample[] = [];
  let completed = 0;
  let progress = 0;
  let last: Written | null = null;
  let unsent = 0;
  let every: StallCounter = emptyCounter();
  let written: StallCounter = emptyCounter();
  let workers = 0;
  type Row = { every: StallCounter; written: StallCounter; due: boolean; landed: boolean; prevFailing: number[] };
  const rows: Row[] = [];
  steps.forEach((step, seq) => {
    if (step.kind === 'busy') progress++;
    if (step.kind === 'done') completed++;
    if (step.kind === 'restart' || step.kind === 'dead') workers++;
    const working = step.kind === 'busy' || step.kind === 'stuck';
    const s = sample(seq, {
      workerProcesses: step.kind === 'dead' ? 0 : 1,
      worker: step.kind === 'dead' ? null : `w${workers}`,
      backlog: step.kind === 'idle' || step.kind === 'done' || step.kind === 'restart' ? 0 : 3,
      completedTotal: completed,
      inFlight: working ? [{ taskId: `t${completed}`, progress, stage: 'transcode' }] : [],
    });
    window.push(s);
    if (window.length > WINDOW) window.shift();
    every = advanceCounter(every, 'b', window);
    const due = heartbeatDue({
      role: { role: 'primary', epoch: 1 },
      samples: window,
      last,
      unsent,
      now: seq * SAMPLE_MS,
      keepAliveMs: KEEP_ALIVE_MS,
      recoverySamples: RECOVERY,
      sampleMs: SAMPLE_MS,
    });
    const landed = due !== null && step.writeOk;
    if (landed) {
      written = advanceCounter(written, 'b', window);
      last = { role: 'primary', epoch: 1, news: newsOf(s, SAMPLE_MS), at: seq * SAMPLE_MS };
      unsent = 0;
    } else if (due !== null) unsent++;
    const prevFailing = rows.slice(-RECOVERY).map((r) => r.every.failing);
    rows.push({ every, written, due: due !== null, landed, prevFailing });
  });
  return rows;
};

const steps = fc.array(
  fc.record({
    kind: fc.constantFrom<Step['kind']>('idle', 'busy', 'stuck', 'dead', 'done', 'restart'),
    writeOk: fc.constantFrom(true, true, true, false),
  }),
  { minLength: 1, maxLength: 80 },
);

describe('a primary that writes its heartbeat only with news (property)', () => {
  it('gives the watchdog every failing sample and the healthy ones that close it, and the same stall count', () => {
    fc.assert(
      fc.property(steps, (run) => {
        simulate(run).forEach((row) => {
          // A failing sample, or one of the healthy ones after it, is always written.
          if (row.every.failing > 0 || row.prevFailing.some((f) => f > 0)) expect(row.due).toBe(true);
          // What the watchdog counts from the heartbeats written is what it would count from all of them.
          if (row.landed) {
            expect(row.written.failing).toBe(row.every.failing);
            expect(Math.min(row.written.healthy, RECOVERY)).toBe(Math.min(row.every.healthy, RECOVERY));
          }
        });
      }),
      { numRuns: 500 },
    );
  });

  it('closes what it opened as soon as writing every sample would: a healthy run after a stall arrives whole', () => {
    fc.assert(
      fc.property(steps, (run) => {
        let open = false;
        simulate(run).forEach((row, seq) => {
          if (row.every.failing > 0) open = true;
          // The step at which a watchdog reading every sample could close the incident: one reading
          // only what was written closes it there too (or, if S3 refused that write, at the next that lands).
          if (open && row.every.healthy >= RECOVERY && run[seq]?.writeOk === true) {
            expect(row.landed).toBe(true);
            expect(row.written.healthy).toBeGreaterThanOrEqual(RECOVERY);
            open = false;
          }
        });
      }),
      { numRuns: 500 },
    );
  });

  it('writes an idle primary once per keep-alive', () => {
    const rows = simulate(Array.from({ length: 200 }, () => ({ kind: 'idle' as const, writeOk: true })));
    expect(rows.filter((r) => r.landed).length).toBe(1 + Math.floor((199 * SAMPLE_MS) / KEEP_ALIVE_MS));
  });
});

/** What a standby's worker is at a sample, and whether its heartbeat write lands. */
type StandbyStep = { ready: 'ready' | 'no-worker' | 'unproven'; writeOk: boolean };

/** A standby's run: which samples the policy writes, and which find its worker not ready. */
const simulateStandby = (steps: readonly StandbyStep[]) => {
  const window: Sample[] = [];
  let last: Written | null = null;
  let unsent = 0;
  return steps.map((step, seq) => {
    const s = sample(seq, {
      backlog: null,
      workerProcesses: step.ready === 'no-worker' ? 0 : 1,
      worker: step.ready === 'no-worker' ? null : 'w',
      proofAgeMs: step.ready === 'unproven' ? 10 * SAMPLE_MS : 1_000,
    });
    window.push(s);
    if (window.length > WINDOW) window.shift();
    const due = heartbeatDue({
      role: { role: 'standby', epoch: 1 },
      samples: window,
      last,
      unsent,
      now: seq * SAMPLE_MS,
      keepAliveMs: KEEP_ALIVE_MS,
      recoverySamples: RECOVERY,
      sampleMs: SAMPLE_MS,
    });
    const landed = due !== null && step.writeOk;
    if (landed) {
      last = { role: 'standby', epoch: 1, news: newsOf(s, SAMPLE_MS), at: seq * SAMPLE_MS };
      unsent = 0;
    } else if (due !== null) unsent++;
    const unready = window.slice(-4).some((x) => x.workerProcesses === 0 || (x.proofAgeMs ?? 0) > 4 * SAMPLE_MS);
    return { due: due !== null, landed, unready };
  });
};

const standbySteps = fc.array(
  fc.record({
    ready: fc.constantFrom<StandbyStep['ready']>('ready', 'ready', 'no-worker', 'unproven'),
    writeOk: fc.constantFrom(true, true, true, false),
  }),
  { minLength: 1, maxLength: 80 },
);

describe('a standby that writes its heartbeat only with news (property)', () => {
  it('writes every sample that finds its worker not ready, and the ones after it that the watchdog judges', () => {
    fc.assert(
      fc.property(standbySteps, (run) => {
        simulateStandby(run).forEach((row) => {
          if (row.unready) expect(row.due).toBe(true);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('writes a ready standby once per keep-alive', () => {
    const rows = simulateStandby(Array.from({ length: 200 }, () => ({ ready: 'ready' as const, writeOk: true })));
    expect(rows.filter((r) => r.landed).length).toBe(1 + Math.floor((199 * SAMPLE_MS) / KEEP_ALIVE_MS));
  });
});
