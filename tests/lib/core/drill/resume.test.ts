import fc from 'fast-check';
import { buildReport, type Observations } from '../../../../lib/core/drill/report';
import { resumeAfter } from '../../../../lib/core/drill/resume';
import { parseScenario } from '../../../../lib/core/drill/scenario';
import { blankObservations } from '../../../helpers/observations';

const receive = (t: number, node: string, ...taskIds: string[]) => ({
  t,
  node,
  count: taskIds.length,
  epoch: 1,
  taskIds,
});
const done = (t: number, node: string, taskId: string) => ({ t, node, kind: 'done' as const, taskId, epoch: 1 });

describe('resumeAfter', () => {
  it('times the tasks the faulted node held until the last of them is received again or completed', () => {
    const wire = {
      receives: [
        receive(10, 'node-1', 'a', 'b'),
        receive(20, 'node-1', 'c'),
        receive(30, 'node-2', 'x'),
        receive(104, 'node-1', 'a'),
        receive(112, 'node-1', 'b'),
      ],
      // c was completed before the fault: not held. b is also completed after the fault, later than its receive.
      writes: [done(50, 'node-1', 'c'), done(200, 'node-1', 'b')],
      extensions: [],
    };
    expect(resumeAfter(wire, { at: 100, node: 'node-1' })).toMatchObject({ inFlight: 2, resumedAt: 112 });
    // node-2 held x, and nobody took it up again.
    expect(resumeAfter(wire, { at: 100, node: 'node-2' })).toMatchObject({ inFlight: 1, resumedAt: null });
    // A node that held nothing.
    expect(resumeAfter(wire, { at: 100, node: 'node-3' })).toEqual({
      inFlight: 0,
      resumedAt: null,
      unrecorded: 0,
      unrecordedResumedAt: null,
    });
  });

  it(
    'counts apart a task received as the fault struck whose receipt ' +
      'never reached disk: only its visibility timeout frees it',
    () => {
      const wire = {
        receives: [
          receive(10, 'node-1', 'a'),
          receive(99.9, 'node-1', 'b'),
          receive(104, 'node-2', 'a'),
          receive(400, 'node-2', 'b'),
        ],
        writes: [],
        extensions: [],
      };
      expect(resumeAfter(wire, { at: 100, node: 'node-1', recorded: ['a'] })).toEqual({
        inFlight: 1,
        resumedAt: 104,
        unrecorded: 1,
        unrecordedResumedAt: 400,
      });
      // Not known: every held task counts.
      expect(resumeAfter(wire, { at: 100, node: 'node-1' })).toEqual({
        inFlight: 2,
        resumedAt: 400,
        unrecorded: 0,
        unrecordedResumedAt: null,
      });
    },
  );

  it('a task handed to another node before the fault is that node’s, and a completion counts as taken up', () => {
    const wire = {
      receives: [receive(10, 'node-1', 'a'), receive(40, 'node-2', 'a')],
      writes: [done(130, 'node-2', 'a')],
      extensions: [],
    };
    expect(resumeAfter(wire, { at: 100, node: 'node-1' })).toMatchObject({ inFlight: 0, resumedAt: null });
    expect(resumeAfter(wire, { at: 100, node: 'node-2' })).toMatchObject({ inFlight: 1, resumedAt: 130 });
  });

  it('a worker that carries on with a task under its old receipt takes it up when it extends the message', () => {
    const wire = {
      receives: [receive(10, 'node-1', 'a')],
      writes: [done(300, 'node-1', 'a')],
      extensions: [
        { t: 50, node: 'node-1', taskId: 'a' },
        { t: 103, node: 'node-1', taskId: 'a' },
      ],
    };
    expect(resumeAfter(wire, { at: 100, node: 'node-1' })).toMatchObject({ inFlight: 1, resumedAt: 103 });
  });

  it("counts the faulted node's own receives and extensions only once its worker can act again", () => {
    // A stopped worker's extension and long poll were on their way as the fault struck at 100.
    const wire = {
      receives: [receive(10, 'node-1', 'a'), receive(100, 'node-1', 'a'), receive(130, 'node-2', 'a')],
      writes: [],
      extensions: [{ t: 100, node: 'node-1', taskId: 'a' }],
    };
    expect(resumeAfter(wire, { at: 100, node: 'node-1', backAt: null })).toMatchObject({ resumedAt: 130 });
    expect(resumeAfter(wire, { at: 100, node: 'node-1', backAt: 120 })).toMatchObject({ resumedAt: 130 });
    expect(resumeAfter(wire, { at: 100, node: 'node-1' })).toMatchObject({ resumedAt: 100 });
    const thawed = { ...wire, extensions: [...wire.extensions, { t: 121, node: 'node-1', taskId: 'a' }] };
    expect(resumeAfter(thawed, { at: 100, node: 'node-1', backAt: 120 })).toMatchObject({ resumedAt: 121 });
  });

  it('the resume time is never before the fault, and is null exactly when a held task was never taken up', () => {
    const event = fc.record({
      t: fc.integer({ min: 0, max: 200 }),
      node: fc.constantFrom('node-1', 'node-2'),
      task: fc.constantFrom('a', 'b', 'c'),
      done: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 30 }), fc.integer({ min: 0, max: 200 }), (events, at) => {
        const wire = {
          receives: events.filter((e) => !e.done).map((e) => receive(e.t, e.node, e.task)),
          writes: events.filter((e) => e.done).map((e) => done(e.t, e.node, e.task)),
          extensions: [],
        };
        const r = resumeAfter(wire, { at, node: 'node-1' });
        if (r.inFlight === 0) expect(r.resumedAt).toBeNull();
        if (r.resumedAt !== null) expect(r.resumedAt).toBeGreaterThanOrEqual(at);
        const takenUp = (id: string) => events.some((e) => e.t >= at && e.task === id);
        if (r.inFlight > 0 && r.resumedAt === null) expect(['a', 'b', 'c'].some((id) => !takenUp(id))).toBe(true);
      }),
    );
  });
});

describe('maxResumeSeconds', () => {
  const scenario = parseScenario({
    name: 'r',
    nodes: 2,
    seconds: 400,
    workload: { tasks: 1, meanTaskSeconds: 90 },
    faults: [{ at: 100, kind: 'crash-worker' }],
    expect: { maxResumeSeconds: 30 },
  });
  const observations = (resumeAt: number | null): Observations =>
    blankObservations({
      faults: [{ at: 100, kind: 'crash-worker', node: 'node-1' }],
      supervisorRestarts: [{ t: 102, node: 'node-1' }],
      workerStarts: [{ t: 102, node: 'node-1' }],
      leaders: [{ t: 0, epoch: 1, primary: 'node-1' }],
      receives: [
        receive(10, 'node-1', 'task-0001'),
        ...(resumeAt === null ? [] : [receive(resumeAt, 'node-1', 'task-0001')]),
      ],
      writes: [done(300, 'node-1', 'task-0001')],
      completions: new Map([['task-0001', 1]]),
      enqueued: ['task-0001'],
    });
  const meta = { seed: 1, timeScale: 20, wallSeconds: 30 };

  it('passes when the held task is received again within the bound, and reports when', () => {
    const r = buildReport(scenario, observations(104), meta);
    expect(r.incidents[0]).toMatchObject({ inFlight: 1, resumedAt: 104 });
    expect(r.expectations.find((e) => e.name === 'maxResumeSeconds')).toMatchObject({ actual: 4, ok: true });
  });

  it("times a stopped worker's own take-ups from the end of its own fault, not another's", () => {
    const o = blankObservations({
      faults: [{ at: 100, kind: 'stall-worker', node: 'node-1' }],
      leaders: [{ t: 0, epoch: 1, primary: 'node-1' }],
      receives: [receive(10, 'node-1', 'task-0001')],
      extensions: [110, 121].map((t) => ({ t, node: 'node-1', taskId: 'task-0001' })),
      timeline: [
        { t: 105, node: 'node-1', event: 'fault-cleared', detail: 'lost-response' },
        { t: 120, node: 'node-1', event: 'fault-cleared', detail: 'stall-worker' },
      ],
      writes: [done(300, 'node-1', 'task-0001')],
      completions: new Map([['task-0001', 1]]),
      enqueued: ['task-0001'],
    });
    expect(buildReport(scenario, o, meta).incidents[0]).toMatchObject({ inFlight: 1, resumedAt: 121 });
  });

  it('fails when the task waited out its visibility timeout', () => {
    // Only its completion at 300 s took it up again.
    const r = buildReport(scenario, observations(null), meta);
    expect(r.expectations.find((e) => e.name === 'maxResumeSeconds')).toMatchObject({ actual: 200, ok: false });
    expect(r.ok).toBe(false);
  });
});
