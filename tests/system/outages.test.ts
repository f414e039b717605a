import type { Report } from '../../lib/core/drill/report';
import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill, passed } from '../helpers/drill';

/**
 * Outages as long as real ones, and networks slow without being down: each drill asserts what
 * was lost, dead-lettered, failed over and restarted, who held each epoch, and that no write of
 * an older epoch landed after a newer one acted.
 */
afterAll(() => killAll());

/** The watchdog's actions on a node: none of them may follow from an outage of the fleet's stores. */
const ACTIONS = ['stalled', 'node_silent', 'node_dead', 'restart_sent', 'failover_started', 'promoted'];

const nothingLost = (report: Report): void => {
  passed(report);
  expect(report.tasks.lost).toBe(0);
  expect(report.tasks.deadLettered).toBe(0);
  expect(report.tasks.completed).toBe(report.tasks.enqueued);
  expect(report.invariants.noStaleEpochWrites).toBe(true);
};

describe('outage drills', () => {
  it(
    'loses, dead-letters, restarts and fails over nothing while S3 is down for the ' +
      'whole fleet for 10 minutes, alerts the outage once, and completes everything after',
    async () => {
      const { report } = await drill('s3-outage');
      nothingLost(report);
      expect(actual(report, 'failovers')).toBe(0);
      expect(actual(report, 'restarts')).toBe(0);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1']);
      expect(report.timeline.filter((e) => ACTIONS.includes(e.event))).toEqual([]);
      expect(report.timeline.filter((e) => e.event === 'outage').map((e) => e.node)).toEqual(['node-1']);
      const over = report.timeline.find((e) => e.event === 'recovered' && e.node === 'node-1');
      expect(over?.detail).toMatch(/reaches S3 again/);
    },
    DRILL_MS,
  );

  it(
    'fails over, as justified, from a primary that alone lost S3 for ' +
      '5 minutes (DynamoDB and SQS fine): it steps down, nothing is lost',
    async () => {
      const { report } = await drill('primary-loses-s3');
      nothingLost(report);
      expect(actual(report, 'failovers')).toBe(1);
      expect(actual(report, 'falseFailovers')).toBe(0);
      expect(actual(report, 'restarts')).toBe(0);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-2']);
      // It stepped down: the standby took the lease by its own clock, after a stall window without S3.
      const taken = report.epochs[1].from;
      expect(taken).toBeGreaterThanOrEqual(120 + 120);
      expect(report.timeline.some((e) => e.event === 'role' && e.node === 'node-2' && /by node-2/.test(e.detail))).toBe(
        true,
      );
    },
    DRILL_MS,
  );

  it(
    'promotes the third node, not the best standby that lost S3, when the primary crashes',
    async () => {
      const { report } = await drill('three-nodes-standby-lost-s3');
      nothingLost(report);
      expect(actual(report, 'failovers')).toBe(1);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-3']);
    },
    DRILL_MS,
  );

  it(
    'keeps its lease, its tasks and its role through 8 s of latency on every ' +
      'request of the primary for 10 minutes: no fence flapping, no failover',
    async () => {
      const { report } = await drill('primary-slow-network');
      nothingLost(report);
      expect(actual(report, 'failovers')).toBe(0);
      expect(actual(report, 'restarts')).toBe(0);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1']);
      expect(report.timeline.filter((e) => e.node === 'node-1' && e.event === 'agent-role')).toEqual([]);
      // The watchdog acts on nothing. It may call the primary silent for a moment: 8 s on each
      // renewal, with DynamoDB's throttles and lost answers on top, can leave the lease's sample
      // two intervals old. Its lease decides, and it is heard from again before that.
      expect(report.timeline.filter((e) => ACTIONS.includes(e.event) && e.event !== 'node_silent')).toEqual([]);
      const silent = report.timeline.filter((e) => e.event === 'node_silent');
      for (const s of silent)
        expect(
          report.timeline.some((e) => e.event === 'recovered' && e.node === s.node && e.t > s.t && e.t - s.t < 60),
        ).toBe(true);
    },
    DRILL_MS,
  );

  it(
    'fences on the wire when the primary is slow past its lease and its agent dies: ' +
      'no old-epoch write after the new epoch, its tasks back within a visibility timeout',
    async () => {
      const { report } = await drill('slow-then-dead-primary');
      nothingLost(report);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-2']);
      const killed = report.incidents.find((i) => i.fault === 'kill-agent')!;
      expect(killed.inFlight).toBeGreaterThan(0);
      expect(killed.resumedAt! - killed.faultAt).toBeLessThanOrEqual(60);
    },
    DRILL_MS,
  );

  it(
    'after an await-fence failover, resumes at once when the new primary’s ' +
      'agent restarts: the handover wait is not copied into later renewals',
    async () => {
      const { report } = await drill('await-fence-agent-restart');
      nothingLost(report);
      expect(
        report.timeline.some((e) => e.event === 'promoted' && /starts once the old lease has lapsed/.test(e.detail)),
      ).toBe(true);
      const restart = report.timeline.find((e) => e.event === 'fault' && /kill-agent/.test(e.detail))!;
      expect(restart.node).toBe('node-2');
      // Its worker never stops consuming: the restarted agent renews its own record and says primary at once.
      const after = report.timeline.filter((e) => e.t >= restart.t && e.node === 'node-2' && e.event === 'agent-role');
      expect(after).toEqual([]);
    },
    DRILL_MS,
  );
});
