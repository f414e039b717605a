import type { Report } from '../../lib/core/drill/report';
import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill } from '../helpers/drill';

/** Task-state drills through `fleet drill` (issue 4): nothing lost, nothing done twice. */
afterAll(() => killAll());

const clean = (report: Report): void => {
  expect(report.expectations.filter((e) => !e.ok)).toEqual([]);
  expect(Object.values(report.invariants).every(Boolean)).toBe(true);
  expect(report.tasks.lost).toBe(0);
  expect(report.tasks.duplicateCompletions).toBe(0);
};

describe('task-state drills', () => {
  it(
    'resumes in-flight multi-stage tasks from their checkpoints after a failover',
    async () => {
      // Whether a task in flight at the kill has a stage checkpointed yet varies from run to run
      // at the same seed: the first pair of tasks finished at 179 s in one run (the next pair, 20 s
      // in, had nothing to resume from) and was still a stage short at 200 s in another. So the
      // property is asserted as such: no task another node had checkpointed is started over (the
      // recorder notes `restarted`; a worker that ignored checkpoints made two here), and every
      // resume picks up at the stage after the checkpointed ones.
      const { report } = await drill('failover-mid-task-resumes');
      clean(report);
      expect(report.timeline.filter((e) => e.event === 'restarted')).toEqual([]);
      for (const e of report.timeline.filter((t) => t.event === 'resumed')) expect(e.detail).toMatch(/at stage (titling|metadata|delivery)/);
      // What the dead primary's last heartbeat named is carried on with at the failover; a message it
      // received in the 15 s after that heartbeat waits out its visibility timeout (CI: 455 s), so
      // no bound on the last task is promised here.
      expect(report.incidents[0]?.inFlight).toBeGreaterThan(0);
    },
    DRILL_MS,
  );

  it(
    'resumes a task on the same node after its worker crashed mid-stage',
    async () => {
      const { report } = await drill('crash-mid-stage-resumes');
      clean(report);
      expect(report.timeline.some((e) => e.event === 'resumed' && e.node === 'node-1')).toBe(true);
      // The restarted worker hands back what the crashed one held: its tasks resume within a
      // sync interval (30 s), not after their 300 s visibility timeout.
      const crash = report.incidents.find((i) => i.fault === 'crash-worker');
      expect(crash?.inFlight).toBeGreaterThan(0);
      expect(crash?.resumedAt).not.toBeNull();
      expect((crash?.resumedAt ?? Infinity) - (crash?.faultAt ?? 0)).toBeLessThanOrEqual(30);
    },
    DRILL_MS,
  );

  it(
    'loses and duplicates nothing, and fails nothing over, under S3 throttling and latency',
    async () => {
      const { report } = await drill('s3-throttle-and-latency');
      clean(report);
      expect(actual(report, 'failovers')).toBe(0);
      expect(actual(report, 'restarts')).toBe(0);
    },
    DRILL_MS,
  );

  it(
    'declares no stall when tasks run 3× slower but progress',
    async () => {
      const { report } = await drill('slow-tasks');
      clean(report);
      expect(report.timeline.some((e) => e.event === 'stalled')).toBe(false);
    },
    DRILL_MS,
  );

  it(
    'dead-letters a poison task with an alert and completes the rest',
    async () => {
      const { report } = await drill('poison-task');
      clean(report);
      expect(report.tasks.deadLettered).toBe(1);
      expect(report.timeline.some((e) => e.event === 'poison_task')).toBe(true);
      expect(report.tasks.completed).toBe(report.tasks.enqueued);
    },
    DRILL_MS,
  );
});
