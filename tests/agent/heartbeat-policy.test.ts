import fc from 'fast-check';
import { heartbeatDue, newsOf, type DueInput, type Written } from '../../agent/heartbeat-policy';
import { advanceCounter, emptyCounter, type StallCounter } from '../../lib/core/fleet/stall';
import type { Leader, Sample } from '../../lib/core/schemas';
import { sample } from '../helpers/fixtures';

const SAMPLE_MS = 15_000;
const KEEP_ALIVE_MS = 300_000;
const WINDOW = 16;
const RECOVERY = 2;

const base = (over: Partial<DueInput> = {}): DueInput => {
  const samples = [sample(0, { backlog: 0 }), sample(1, { backlog: 0 })];
  return {
    role: { role: 'primary', epoch: 1 },
    boot: 'b',
    samples,
    carried: { boot: 'b', seq: 0 },
    last: { role: 'primary', epoch: 1, news: newsOf(samples[1], SAMPLE_MS), unsent: 0, at: 0 },
    unsent: 0,
    now: 15_000,
    keepAliveMs: KEEP_ALIVE_MS,
    recoverySamples: RECOVERY,
    sampleMs: SAMPLE_MS,
    ...over,
  };
};

describe('heartbeatDue', () => {
  it('leaves a healthy primary whose lease carried the previous sample to its renewals', () => {
    expect(heartbeatDue(base())).toBeNull();
  });

  it.each<[string, Partial<DueInput>, string]>([
    ['nothing written yet', { last: null }, 'first'],
    ['a write that failed', { unsent: 1 }, 'unsent'],
    ['a heartbeat that reported failed writes (the next one clears it)', { last: { ...base().last!, unsent: 2 } }, 'unsent'],
    ["a restarted worker's first samples", { samples: [sample(0, { backlog: 0, worker: 'a' }), sample(1, { backlog: 0, worker: 'b' }), sample(2, { backlog: 0, worker: 'b' })] }, 'failing'],
    ['a new epoch', { role: { role: 'primary', epoch: 2 } }, 'role'],
    ['a store found unreachable', { samples: [sample(0, { backlog: 0 }), sample(1, { backlog: 0, unreachable: ['s3'] })] }, 'news'],
    ['a failing sample', { samples: [sample(0), sample(1)] }, 'failing'],
    ['a sample after a failing one', { samples: [sample(0), sample(1), sample(2, { completedTotal: 1, backlog: 0 })] }, 'failing'],
    ['a completion', { samples: [sample(0, { backlog: 0 }), sample(1, { backlog: 0, completedTotal: 1 })] }, 'news'],
    ['a renewal that did not carry the previous sample', { carried: { boot: 'b', seq: 0 }, samples: [sample(0, { backlog: 0 }), sample(1, { backlog: 0 }), sample(2, { backlog: 0 })] }, 'carried'],
    ["another boot's renewal", { carried: { boot: 'old', seq: 5 } }, 'carried'],
    ['no renewal at all', { carried: null }, 'carried'],
    ['the keep-alive', { now: KEEP_ALIVE_MS }, 'keep-alive'],
  ])('writes for %s', (_, over, reason) => {
    expect(heartbeatDue(base(over))).toBe(reason);
  });

  const standby = (over: Partial<DueInput> = {}): DueInput => {
    const samples = [sample(0, { backlog: null }), sample(1, { backlog: null })];
    return base({ role: { role: 'standby', epoch: 1 }, samples, carried: { boot: 'b', seq: 1 }, last: { role: 'standby', epoch: 1, news: newsOf(samples[1], SAMPLE_MS), unsent: 0, at: 0 }, ...over });
  };

  it('leaves a ready standby whose beat carried this sample to its beats', () => {
    expect(heartbeatDue(standby())).toBeNull();
  });

  it.each<[string, Partial<DueInput>, string]>([
    ['a beat that did not carry this sample (its write failed)', { carried: { boot: 'b', seq: 0 } }, 'carried'],
    ['no beat written yet', { carried: null }, 'carried'],
    ['a worker gone', { samples: [sample(0, { backlog: null }), sample(1, { backlog: null, workerProcesses: 0, worker: null })] }, 'failing'],
    ['a worker not proven lately', { samples: [sample(0, { backlog: null }), sample(1, { backlog: null, proofAgeMs: 10 * SAMPLE_MS })] }, 'failing'],
    ['a ready sample after an unready one', { samples: [sample(0, { backlog: null, workerProcesses: 0, worker: null }), sample(1, { backlog: null })] }, 'failing'],
    ['a new epoch seen', { samples: [sample(0, { backlog: null }), sample(1, { backlog: null, epochSeen: 9 })] }, 'news'],
    ['the keep-alive', { now: KEEP_ALIVE_MS }, 'keep-alive'],
  ])('writes for a standby with %s', (_, over, reason) => {
    expect(heartbeatDue(standby(over))).toBe(reason);
  });

  it("does not count a sample's time, CPU, memory, task progress or lease left as news", () => {
    const a = sample(1, { backlog: 2, inFlight: [{ taskId: 't', progress: 1, stage: 'transcode' }], leaseLeftMs: 20_000 });
    const b = sample(2, { at: a.at + 15_000, cpuPercent: 90, memoryBytes: 9e8, backlog: 2, inFlight: [{ taskId: 't', progress: 7, stage: 'transcode' }], leaseLeftMs: 5_000, syncMs: 40 });
    expect(newsOf(b, SAMPLE_MS)).toBe(newsOf(a, SAMPLE_MS));
    expect(newsOf({ ...b, inFlight: [{ taskId: 't', progress: 7, stage: 'titling' }] }, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
    expect(newsOf({ ...b, proofAgeMs: 10 * SAMPLE_MS }, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
    expect(newsOf({ ...b, unreachable: ['s3'] }, SAMPLE_MS)).not.toBe(newsOf(a, SAMPLE_MS));
  });
});

/** What the primary's worker does between two samples. */
type Step = { kind: 'idle' | 'busy' | 'stuck' | 'dead' | 'done' | 'restart'; leaseOk: boolean; writeOk: boolean };

/**
 * A primary's run: its samples, which of them the policy writes (and S3 takes), and what its
 * renewals carry; beside it, the watchdog's stall counter fed with every sample (as if every
 * heartbeat were written) and one fed only with the heartbeats written.
 */
const simulate = (steps: readonly Step[]) => {
  const window: Sample[] = [];
  let completed = 0;
  let progress = 0;
  let last: Written | null = null;
  let unsent = 0;
  let carried: Leader['beat'] | null = null;
  let every: StallCounter = emptyCounter();
  let written: StallCounter = emptyCounter();
  let writtenSeq = -1;
  let workers = 0;
  const rows: { every: StallCounter; written: StallCounter; due: boolean; landed: boolean; known: number; prevFailing: number[] }[] = [];
  steps.forEach((step, seq) => {
    if (step.kind === 'busy') progress++;
    if (step.kind === 'done') completed++;
    if (step.kind === 'restart' || step.kind === 'dead') workers++;
    const working = step.kind === 'busy' || step.kind === 'stuck';
    const worker = step.kind === 'dead' ? null : `w${workers}`;
    const s = sample(seq, { workerProcesses: step.kind === 'dead' ? 0 : 1, worker, backlog: step.kind === 'idle' || step.kind === 'done' || step.kind === 'restart' ? 0 : 3, completedTotal: completed, inFlight: working ? [{ taskId: `t${completed}`, progress, stage: 'transcode' }] : [] });
    window.push(s);
    if (window.length > WINDOW) window.shift();
    every = advanceCounter(every, 'b', window);
    const due = heartbeatDue({ role: { role: 'primary', epoch: 1 }, boot: 'b', samples: window, carried, last, unsent, now: seq * SAMPLE_MS, keepAliveMs: KEEP_ALIVE_MS, recoverySamples: RECOVERY, sampleMs: SAMPLE_MS });
    const landed = due !== null && step.writeOk;
    if (landed) {
      written = advanceCounter(written, 'b', window);
      writtenSeq = seq;
      last = { role: 'primary', epoch: 1, news: newsOf(s, SAMPLE_MS), unsent, at: seq * SAMPLE_MS };
      unsent = 0;
    } else if (due !== null) unsent++;
    // The renewal before the next sample carries this one, unless S3 refused the last heartbeat.
    if (step.leaseOk && unsent === 0) carried = { boot: 'b', seq };
    rows.push({ every, written, due: due !== null, landed, known: Math.max(writtenSeq, carried?.seq ?? -1), prevFailing: rows.slice(-RECOVERY).map((r) => r.every.failing) });
  });
  return rows;
};

const steps = fc.array(
  fc.record({
    kind: fc.constantFrom<Step['kind']>('idle', 'busy', 'stuck', 'dead', 'done', 'restart'),
    leaseOk: fc.constantFrom(true, true, true, false),
    writeOk: fc.constantFrom(true, true, true, false),
  }),
  { minLength: 1, maxLength: 80 },
);

describe('a primary that writes its heartbeat only with news (property)', () => {
  it('gives the watchdog every failing sample and the healthy ones that close it, and the same stall count as writing every sample', () => {
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

  it('closes what it opened as soon as writing every sample would: a healthy run of one worker after a stall reaches the watchdog whole', () => {
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

  it('keeps its liveness no more than a sample behind, by the lease or else by the heartbeat, while S3 takes its writes', () => {
    fc.assert(
      fc.property(steps, (run) => {
        const rows = simulate(run);
        rows.forEach((row, seq) => {
          if (run.slice(Math.max(0, seq - 1), seq + 1).every((s) => s.writeOk)) expect(row.known).toBeGreaterThanOrEqual(seq - 1);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('writes an idle primary once per keep-alive', () => {
    const rows = simulate(Array.from({ length: 200 }, () => ({ kind: 'idle' as const, leaseOk: true, writeOk: true })));
    expect(rows.filter((r) => r.landed).length).toBe(1 + Math.floor((199 * SAMPLE_MS) / KEEP_ALIVE_MS));
  });
});

/** What a standby's worker is at a sample, whether its beat write and its heartbeat write land. */
type StandbyStep = { ready: 'ready' | 'no-worker' | 'unproven'; beatOk: boolean; writeOk: boolean };

/** A standby's run: which samples the policy writes, and the newest sample known by beat or heartbeat. */
const simulateStandby = (steps: readonly StandbyStep[]) => {
  const window: Sample[] = [];
  let last: Written | null = null;
  let unsent = 0;
  let carried: Leader['beat'] | null = null;
  let writtenSeq = -1;
  return steps.map((step, seq) => {
    const s = sample(seq, { backlog: null, workerProcesses: step.ready === 'no-worker' ? 0 : 1, worker: step.ready === 'no-worker' ? null : 'w', proofAgeMs: step.ready === 'unproven' ? 10 * SAMPLE_MS : 1_000 });
    window.push(s);
    if (window.length > WINDOW) window.shift();
    // The agent writes the beat before it decides on the heartbeat.
    if (step.beatOk) carried = { boot: 'b', seq };
    const due = heartbeatDue({ role: { role: 'standby', epoch: 1 }, boot: 'b', samples: window, carried, last, unsent, now: seq * SAMPLE_MS, keepAliveMs: KEEP_ALIVE_MS, recoverySamples: RECOVERY, sampleMs: SAMPLE_MS });
    const landed = due !== null && step.writeOk;
    if (landed) {
      writtenSeq = seq;
      last = { role: 'standby', epoch: 1, news: newsOf(s, SAMPLE_MS), unsent, at: seq * SAMPLE_MS };
      unsent = 0;
    } else if (due !== null) unsent++;
    return { due: due !== null, landed, known: Math.max(writtenSeq, carried?.seq ?? -1), unready: window.slice(-4).some((x) => x.workerProcesses === 0 || (x.proofAgeMs ?? 0) > 4 * SAMPLE_MS) };
  });
};

const standbySteps = fc.array(
  fc.record({ ready: fc.constantFrom<StandbyStep['ready']>('ready', 'ready', 'no-worker', 'unproven'), beatOk: fc.constantFrom(true, true, true, false), writeOk: fc.constantFrom(true, true, true, false) }),
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

  it('keeps every sample known, by its beat or else by its heartbeat, whenever either write lands', () => {
    fc.assert(
      fc.property(standbySteps, (run) => {
        simulateStandby(run).forEach((row, seq) => {
          if (run[seq].beatOk || run[seq].writeOk) expect(row.known).toBe(seq);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('writes a ready standby once per keep-alive', () => {
    const rows = simulateStandby(Array.from({ length: 200 }, () => ({ ready: 'ready' as const, beatOk: true, writeOk: true })));
    expect(rows.filter((r) => r.landed).length).toBe(1 + Math.floor((199 * SAMPLE_MS) / KEEP_ALIVE_MS));
  });
});
