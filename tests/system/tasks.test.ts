import type { Report } from '../../lib/core/drill/report';
import { SEED_STAGES as STAGES } from '../../lib/core/pipeline';
import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill } from '../helpers/drill';

/** Task-state drills through `fleet drill`: nothing lost, nothing done twice. */
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
      // The primary dies right after it checkpoints a task's first stage (the fault waits for that
      // write, not for a time): a task is certainly in flight with a stage checkpointed, whatever
      // the scheduling. Its receipt was in the primary's heartbeats for the stage's whole run.
      const { report } = await drill('failover-mid-task-resumes');
      expect(report.unfiredFaults).toEqual([]);
      clean(report);
      const kill = report.incidents[0];
      expect(kill?.fault).toBe('kill-node');
      expect(kill?.inFlight).toBeGreaterThan(0);
      const fault = report.timeline.find((e) => e.event === 'fault');
      expect(fault?.detail).toMatch(/after the 1st checkpoint of node-1 with 1 stage\(s\) done/);
      // No task another node had checkpointed is started over, and each resume picks up at the
      // stage after the ones checkpointed (the recorder notes both).
      expect(report.timeline.filter((e) => e.event === 'restarted')).toEqual([]);
      const resumed = report.timeline.filter((e) => e.event === 'resumed');
      expect(resumed.length).toBeGreaterThan(0);
      for (const e of resumed) {
        const m = /at stage (\w+) \((\d+) stage\(s\) done on node-\d+\)/.exec(e.detail);
        const next = STAGES[Number(m?.[2] ?? NaN)] ?? 'the stage after the checkpointed ones';
        expect({ detail: e.detail, resumedAt: m?.[1] }).toEqual({ detail: e.detail, resumedAt: next });
      }
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

  it(
    "hands a user's pipeline to the standby between two stages: the files byte for byte, the payload untouched",
    async () => {
      // consume.sh exits non-zero unless produce.sh's file arrived whole and the payload as sent:
      // a task that got either wrong would be dead-lettered, and the drill expects none.
      const { report } = await drill('pipeline-failover');
      clean(report);
      expect(report.tasks.deadLettered).toBe(0);
      expect(report.tasks.completed).toBe(report.tasks.enqueued);
      const consume = /at stage consume \(1 stage\(s\) done on node-1\)/;
      const moved = report.timeline.filter(
        (e) => e.event === 'resumed' && e.node === 'node-2' && consume.test(e.detail),
      );
      expect(moved.length).toBeGreaterThan(0);
      for (const files of Object.values(report.artifacts)) {
        expect(files.map((f) => [f.stage, f.path])).toEqual([
          ['produce', 'clip.bin'],
          ['produce', 'clip.sha256'],
          ['consume', 'delivered.sha256'],
        ]);
        expect(files[0]?.size).toBe(1048583);
      }
      expect(Object.keys(report.artifacts)).toHaveLength(report.tasks.enqueued);
    },
    DRILL_MS,
  );
});
