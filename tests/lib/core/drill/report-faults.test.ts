import { drillHtml } from '../../../../lib/core/drill/html';
import { buildReport, type Observations } from '../../../../lib/core/drill/report';
import { formatSummary } from '../../../../lib/harness/drill/render';
import { parseScenario } from '../../../../lib/core/drill/scenario';
import { blankObservations } from '../../../helpers/observations';

/** How the report judges the faults of this release: a targeted s3-outage, a blackhole, a fault that never fired. */
const scenario = parseScenario({
  name: 'r',
  nodes: 2,
  seconds: 600,
  workload: { tasks: 1, meanTaskSeconds: 60 },
  faults: [],
  expect: {},
});
const meta = { seed: 1, timeScale: 20, wallSeconds: 30 };
const failedOver = (faults: Observations['faults'], over: Partial<Observations> = {}): ReturnType<typeof buildReport> =>
  buildReport(
    scenario,
    blankObservations({
      faults,
      leaders: [
        { t: 0, epoch: 1, primary: 'node-1' },
        { t: 200, epoch: 2, primary: 'node-2' },
      ],
      completions: new Map([['task-0001', 1]]),
      enqueued: ['task-0001'],
      ...over,
    }),
    meta,
  );

describe('the report, for the faults of this release', () => {
  it('counts a failover away from a node whose S3 was cut off as justified, while it lasts or after it began', () => {
    const r = failedOver([{ at: 100, kind: 's3-outage', node: 'node-1' }]);
    expect(r.invariants.noFalseFailovers).toBe(true);
    expect(r.incidents[0]).toMatchObject({ fault: 's3-outage', node: 'node-1', failoverAt: 200, newPrimary: 'node-2' });
    expect(r.ok).toBe(true);
    // Cut off after the role moved: it explains nothing.
    expect(failedOver([{ at: 250, kind: 's3-outage', node: 'node-1' }]).invariants.noFalseFailovers).toBe(false);
    // The standby's S3 cut off: the primary's move is still false.
    expect(failedOver([{ at: 100, kind: 's3-outage', node: 'node-2' }]).invariants.noFalseFailovers).toBe(false);
  });

  it('never counts a fleet-wide s3-outage as a reason to fail over', () => {
    const r = failedOver([{ at: 100, kind: 's3-outage', node: 'cloud' }]);
    expect(r.invariants.noFalseFailovers).toBe(false);
    expect(r.incidents[0]).toMatchObject({ failoverAt: null, watched: false });
  });

  it('expects a blackholed node to be found silent, and justifies failing over from it, like a partition', () => {
    const r = failedOver([{ at: 100, kind: 'blackhole-node', node: 'node-1' }], {
      events: [{ t: 150, kind: 'NODE_SILENT', node: 'node-1', incidentId: 'i' }],
    });
    expect(r.incidents[0]).toMatchObject({ watched: true, detectedAt: 150, failoverAt: 200 });
    expect(r.invariants.noFalseFailovers).toBe(true);
  });

  it('measures how long work stopped through a watchdog crash, which no worker has to stop for', () => {
    const r = buildReport(
      scenario,
      blankObservations({
        faults: [{ at: 100, kind: 'watchdog-crash', node: 'watchdog' }],
        receives: [{ t: 90, node: 'node-1', count: 0, epoch: 1 }],
      }),
      meta,
    );
    expect(r.incidents[0]?.consumeGapSeconds).toBe(510);
  });

  it('fails a drill whose fault waited for an event that never came, naming it', () => {
    const unfired = [
      {
        fault: 0,
        kind: 'kill-node',
        reason:
          'faults.0 (kill-node) never fired: the 1st checkpoint of node-1 did not come within 600 s (0 of 1 seen)',
      },
    ];
    const r = buildReport(
      scenario,
      blankObservations({ unfired, leaders: [{ t: 0, epoch: 1, primary: 'node-1' }] }),
      meta,
    );
    expect(r.unfiredFaults).toEqual(unfired);
    expect(Object.values(r.invariants).every(Boolean)).toBe(true);
    expect(r.ok).toBe(false);
    expect(formatSummary(r)).toContain(unfired[0]?.reason);
    expect(drillHtml(r)).toContain('data-check="faults.0 kill-node"');
    expect(
      buildReport(scenario, blankObservations({ leaders: [{ t: 0, epoch: 1, primary: 'node-1' }] }), meta).ok,
    ).toBe(true);
  });
});
