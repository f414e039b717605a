import { redundantAfter } from '../../../../lib/core/drill/redundancy';
import { buildReport } from '../../../../lib/core/drill/report';
import { scenarioSchema } from '../../../../lib/core/drill/scenario';
import { blankObservations } from '../../../helpers/observations';

const epochs = [
  { primary: 'node-1', from: 0 },
  { primary: 'node-2', from: 300 },
];

describe('redundantAfter', () => {
  it('is the moment a node other than the primary of that moment is a ready standby', () => {
    const readiness = [
      { t: 0, node: 'node-2', ready: true },
      { t: 0, node: 'node-1', ready: false },
      // node-2 is promoted at 300 (it no longer counts); node-1 rejoins at 420.
      { t: 310, node: 'node-2', ready: false },
      { t: 420, node: 'node-1', ready: true },
    ];
    expect(redundantAfter({ readiness }, epochs, 100)).toBe(100);
    expect(redundantAfter({ readiness }, epochs, 300)).toBe(420);
    expect(redundantAfter({ readiness: readiness.slice(0, 3) }, epochs, 300)).toBeNull();
  });

  it('counts a standby that was ready all along once the primary changes away from it', () => {
    const readiness = [
      { t: 0, node: 'node-1', ready: true },
      { t: 0, node: 'node-2', ready: false },
    ];
    // At 200 node-1 is the primary: not redundancy. At 300 node-2 is, and node-1 says it is ready.
    expect(redundantAfter({ readiness }, epochs, 200)).toBe(300);
  });
});

describe('the report on rejoins', () => {
  const scenario = scenarioSchema.parse({
    name: 't',
    nodes: 2,
    seconds: 600,
    workload: { tasks: 0, meanTaskSeconds: 1 },
    expect: { restarts: 1, rejoins: 1, maxRedundantSeconds: 200 },
  });

  it('counts a restart that made a standby rejoin as a rejoin, not as a restart of the ladder', () => {
    const o = blankObservations({
      faults: [{ at: 100, kind: 'stall-worker', node: 'node-1' }],
      leaders: [
        { t: 0, epoch: 1, primary: 'node-1' },
        { t: 250, epoch: 2, primary: 'node-2' },
      ],
      events: [
        { t: 220, kind: 'STALLED', node: 'node-1', incidentId: 'node-1-e1-i1' },
        { t: 280, kind: 'STANDBY_UNREADY', node: 'node-1', incidentId: 'node-1-e2-i2' },
        { t: 290, kind: 'RECOVERED', node: 'node-1', incidentId: 'node-1-e2-i2' },
      ],
      restarts: [
        { t: 221, node: 'node-1', finishedAt: 222, ok: true, incidentId: 'node-1-e1-i1' },
        { t: 281, node: 'node-1', finishedAt: 282, ok: true, incidentId: 'node-1-e2-i2' },
      ],
      readiness: [
        { t: 0, node: 'node-2', ready: true },
        { t: 0, node: 'node-1', ready: false },
        { t: 255, node: 'node-2', ready: false },
        { t: 290, node: 'node-1', ready: true },
      ],
    });
    const report = buildReport(scenario, o, { seed: 1, timeScale: 20, wallSeconds: 30 });
    expect(report.expectations.map((e) => [e.name, e.actual, e.ok])).toEqual([
      ['restarts', 1, true],
      ['rejoins', 1, true],
      ['maxRedundantSeconds', 190, true],
    ]);
    expect(report.incidents[0]).toMatchObject({ failoverAt: 250, redundantAt: 290, restartedAt: 222 });
  });
});
