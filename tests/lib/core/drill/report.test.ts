import { buildReport, type Observations } from '../../../../lib/core/drill/report';
import { parseScenario } from '../../../../lib/core/drill/scenario';
import { blankObservations } from '../../../helpers/observations';

const scenarioInput = {
  name: 'r',
  nodes: 2,
  seconds: 600,
  workload: { tasks: 3, meanTaskSeconds: 90 },
  faults: [{ at: 120, kind: 'stall-worker' }],
  expect: { restarts: 1, maxDetectSeconds: 170, lostTasks: 0, duplicateCompletions: 0 },
};
const scenario = parseScenario(scenarioInput);

const observations = (over: Partial<Observations> = {}): Observations =>
  blankObservations({
    faults: [{ at: 120, kind: 'stall-worker', node: 'node-1' }],
    events: [
      { t: 250, kind: 'STALLED', node: 'node-1', incidentId: 'i1' },
      { t: 280, kind: 'RECOVERED', node: 'node-1', incidentId: 'i1' },
    ],
    restarts: [{ t: 251, node: 'node-1', finishedAt: 253, ok: true }],
    leaders: [{ t: 0, epoch: 1, primary: 'node-1' }],
    receives: [{ t: 10, node: 'node-1', count: 1, epoch: 1 }],
    windows: [{ t: 248, node: 'node-1' }],
    addresses: { 'node-1': '192.0.2.1', 'node-2': '192.0.2.2' },
    completions: new Map([
      ['task-0001', 1],
      ['task-0002', 1],
      ['task-0003', 1],
    ]),
    enqueued: ['task-0001', 'task-0002', 'task-0003'],
    ...over,
  });
const meta = { seed: 1, timeScale: 20, wallSeconds: 30 };

describe('buildReport', () => {
  it('passes a healed stall and fills the incident', () => {
    const r = buildReport(scenario, observations(), meta);
    expect(r.ok).toBe(true);
    expect(r.incidents[0]).toMatchObject({
      node: 'node-1',
      faultAt: 120,
      detectedAt: 250,
      restartedAt: 253,
      recoveredAt: 280,
      failoverAt: null,
    });
    expect(r.epochs).toEqual([{ epoch: 1, primary: 'node-1', from: 0, to: null }]);
  });

  it(
    'attributes a failover to the fault that caused it, ' + 'not to an earlier incident on the node that had recovered',
    () => {
      const twoFaults = parseScenario({
        ...scenarioInput,
        seconds: 900,
        faults: [
          { at: 120, kind: 'stall-worker' },
          { at: 400, kind: 'kill-node', target: 'primary' },
        ],
        expect: {},
      });
      const r = buildReport(
        twoFaults,
        observations({
          faults: [
            { at: 120, kind: 'stall-worker', node: 'node-1' },
            { at: 400, kind: 'kill-node', node: 'node-1' },
          ],
          events: [
            { t: 250, kind: 'STALLED', node: 'node-1', incidentId: 'i1' },
            { t: 280, kind: 'RECOVERED', node: 'node-1', incidentId: 'i1' },
            { t: 431, kind: 'NODE_SILENT', node: 'node-1', incidentId: 'i2' },
          ],
          leaders: [
            { t: 0, epoch: 1, primary: 'node-1' },
            { t: 428, epoch: 2, primary: 'node-2' },
          ],
        }),
        meta,
      );
      expect(r.incidents.map((i) => [i.fault, i.failoverAt, i.newPrimary])).toEqual([
        ['stall-worker', null, null],
        ['kill-node', 428, 'node-2'],
      ]);
    },
  );

  it('does not credit a fault with the restart of a later fault on the same node', () => {
    const twoFaults = parseScenario({
      ...scenarioInput,
      seconds: 900,
      faults: [
        { at: 120, kind: 'reboot-node', for: 60 },
        { at: 500, kind: 'stall-worker' },
      ],
      expect: {},
    });
    const r = buildReport(
      twoFaults,
      observations({
        faults: [
          { at: 120, kind: 'reboot-node', node: 'node-1' },
          { at: 500, kind: 'stall-worker', node: 'node-1' },
        ],
        events: [
          { t: 135, kind: 'NODE_SILENT', node: 'node-1', incidentId: 'i1' },
          { t: 625, kind: 'STALLED', node: 'node-1', incidentId: 'i2' },
        ],
        restarts: [{ t: 626, node: 'node-1', finishedAt: 630, ok: true }],
      }),
      meta,
    );
    expect(r.incidents.map((i) => [i.fault, i.restartedAt])).toEqual([
      ['reboot-node', null],
      ['stall-worker', 630],
    ]);
  });

  it('measures how long work stopped through a fault no worker has to stop for, by any work the wire shows', () => {
    const damaged = parseScenario({
      ...scenarioInput,
      faults: [{ at: 100, kind: 'corrupt-object', key: 'leader' }],
      expect: { maxConsumeGapSeconds: 30 },
    });
    const wire = (receives: number[], writes: number[], extensions: number[]) =>
      observations({
        faults: [{ at: 100, kind: 'corrupt-object', node: 'bucket' }],
        events: [],
        restarts: [],
        receives: receives.map((t) => ({ t, node: 'node-1', count: 0, epoch: 1 })),
        writes: writes.map((t) => ({ t, kind: 'checkpoint' as const, taskId: 'task-0001', node: 'node-1', epoch: 1 })),
        extensions: extensions.map((t) => ({ t, node: 'node-1', taskId: 'task-0001' })),
      });
    // Busy workers do not poll: their checkpoints and extensions are the work.
    const busy = buildReport(
      damaged,
      wire([90], [110, 130, 150], [170, ...Array.from({ length: 22 }, (_, i) => 190 + i * 20)]),
      meta,
    );
    expect(busy.incidents[0]?.consumeGapSeconds).toBe(20);
    expect(busy.expectations).toContainEqual({ name: 'maxConsumeGapSeconds', expected: 30, actual: 20, ok: true });
    // A stop: from the last work before the fault to the next after it, and to the drain when nothing came.
    const stopped = buildReport(
      damaged,
      wire([90, 170, ...Array.from({ length: 22 }, (_, i) => 190 + i * 20)], [], []),
      meta,
    );
    expect(stopped.incidents[0]?.consumeGapSeconds).toBe(80);
    expect(stopped.ok).toBe(false);
    expect(buildReport(damaged, wire([90], [], []), meta).incidents[0]?.consumeGapSeconds).toBe(510);
  });

  it('holds maxBacklog as a bound, not an exact count', () => {
    const bounded = parseScenario({ ...scenarioInput, expect: { maxBacklog: 10 } });
    const depths = (most: number) => observations({ depths: [{ t: 1, backlog: most, intake: 0 }] });
    expect(buildReport(bounded, depths(7), meta).expectations).toContainEqual({
      name: 'maxBacklog',
      expected: 10,
      actual: 7,
      ok: true,
    });
    expect(buildReport(bounded, depths(11), meta).expectations).toContainEqual({
      name: 'maxBacklog',
      expected: 10,
      actual: 11,
      ok: false,
    });
  });

  it('counts a task without completion as lost and fails', () => {
    const r = buildReport(scenario, observations({ completions: new Map([['task-0001', 1]]) }), meta);
    expect(r.tasks).toMatchObject({ completed: 1, lost: 2 });
    expect(r.invariants.noLostTasks).toBe(false);
    expect(r.ok).toBe(false);
  });

  it('counts completions beyond the first as duplicates', () => {
    const r = buildReport(
      scenario,
      observations({
        completions: new Map([
          ['task-0001', 2],
          ['task-0002', 1],
          ['task-0003', 3],
        ]),
      }),
      meta,
    );
    expect(r.tasks.duplicateCompletions).toBe(3);
    expect(r.invariants.noDuplicateCompletions).toBe(false);
  });

  it('fails the detection bound when the stall was never detected', () => {
    const r = buildReport(scenario, observations({ events: [] }), meta);
    expect(r.expectations.find((e) => e.name === 'maxDetectSeconds')).toMatchObject({ actual: null, ok: false });
  });

  it('flags a receive by a node that is not the primary of the epoch', () => {
    const r = buildReport(scenario, observations({ receives: [{ t: 10, node: 'node-2', count: 1, epoch: 1 }] }), meta);
    expect(r.invariants.singlePrimaryPerEpoch).toBe(false);
  });

  it('flags a receive from an older epoch after a newer one, and one with no epoch', () => {
    const leaders = [
      { t: 0, epoch: 1, primary: 'node-1' },
      { t: 50, epoch: 2, primary: 'node-2' },
    ];
    const late = [
      { t: 60, node: 'node-2', count: 1, epoch: 2 },
      { t: 61, node: 'node-1', count: 1, epoch: 1 },
    ];
    expect(
      buildReport(scenario, observations({ leaders, receives: late }), meta).invariants.singlePrimaryPerEpoch,
    ).toBe(false);
    expect(
      buildReport(scenario, observations({ receives: [{ t: 1, node: 'node-1', count: 1, epoch: null }] }), meta)
        .invariants.singlePrimaryPerEpoch,
    ).toBe(false);
    const clean = [
      { t: 40, node: 'node-1', count: 1, epoch: 1 },
      { t: 60, node: 'node-2', count: 1, epoch: 2 },
    ];
    expect(
      buildReport(scenario, observations({ leaders, receives: clean }), meta).invariants.singlePrimaryPerEpoch,
    ).toBe(true);
  });

  it('times a failover and the traffic move from the fault', () => {
    const r = buildReport(
      scenario,
      observations({
        faults: [{ at: 100, kind: 'kill-node', node: 'node-1' }],
        events: [{ t: 130, kind: 'NODE_DEAD', node: 'node-1', incidentId: 'i' }],
        leaders: [
          { t: 0, epoch: 1, primary: 'node-1' },
          { t: 131, epoch: 2, primary: 'node-2' },
        ],
        receives: [{ t: 140, node: 'node-2', count: 0, epoch: 2 }],
        dnsChanges: [{ t: 133, value: '192.0.2.2', insyncAt: 193 }],
      }),
      meta,
    );
    expect(r.incidents[0]).toMatchObject({
      detectedAt: 130,
      failoverAt: 131,
      newPrimary: 'node-2',
      servingAt: 140,
      trafficAt: 133,
      trafficInsyncAt: 193,
    });
    expect(r.invariants.noFalseFailovers).toBe(true);
  });

  it('flags a failover away from a primary no fault touched', () => {
    const r = buildReport(
      scenario,
      observations({
        faults: [],
        leaders: [
          { t: 0, epoch: 1, primary: 'node-1' },
          { t: 50, epoch: 2, primary: 'node-2' },
        ],
      }),
      meta,
    );
    expect(r.invariants.noFalseFailovers).toBe(false);
  });

  it('times the stall verdict from the heartbeat that closed the window, not from the fault', () => {
    const r = buildReport(parseScenario({ ...scenarioInput, expect: { maxVerdictSeconds: 5 } }), observations(), meta);
    expect(r.incidents[0]).toMatchObject({ windowAt: 248, detectedAt: 250 });
    expect(r.expectations).toEqual([{ name: 'maxVerdictSeconds', expected: 5, actual: 2, ok: true }]);
    const late = buildReport(
      parseScenario({ ...scenarioInput, expect: { maxVerdictSeconds: 5 } }),
      observations({ windows: [{ t: 200, node: 'node-1' }] }),
      meta,
    );
    expect(late.expectations[0]).toMatchObject({ actual: 50, ok: false });
  });

  it('flags a checkpoint or completion of an older epoch once a newer epoch has acted (a zombie)', () => {
    const leaders = [
      { t: 0, epoch: 1, primary: 'node-1' },
      { t: 50, epoch: 2, primary: 'node-2' },
    ];
    const receives = [
      { t: 40, node: 'node-1', count: 1, epoch: 1 },
      { t: 60, node: 'node-2', count: 1, epoch: 2 },
    ];
    const zombie = [{ t: 70, node: 'node-1', kind: 'done' as const, taskId: 'task-0001', epoch: 1 }];
    expect(
      buildReport(scenario, observations({ leaders, receives, writes: zombie }), meta).invariants.noStaleEpochWrites,
    ).toBe(false);
    const beforeHandover = [{ t: 45, node: 'node-1', kind: 'checkpoint' as const, taskId: 'task-0001', epoch: 1 }];
    expect(
      buildReport(scenario, observations({ leaders, receives, writes: beforeHandover }), meta).invariants
        .noStaleEpochWrites,
    ).toBe(true);
  });
});
