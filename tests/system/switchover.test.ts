import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill, passed } from '../helpers/drill';

/**
 * `fleet switchover` under load, through `fleet drill`: the request waits for a checkpoint with two
 * stages done on the primary (an event, not a time), so tasks are certainly mid-pipeline when the
 * primary drains. Every figure comes from the fleet's own records: the wire, and the workers' logs.
 */
afterAll(() => killAll());

describe('switchover drill', () => {
  it(
    'hands the role over under load: drained to checkpoints, no stage run twice, nothing lost, ' +
      'consumption stopped for less than a renewal period',
    async () => {
      const { report } = await drill('switchover-under-load');
      passed(report);
      const [sw] = report.incidents;
      expect(sw).toMatchObject({ fault: 'switchover', node: 'node-1', newPrimary: 'node-2' });
      // One handover, written by the old primary itself once drained, to the next epoch.
      expect(report.epochs.map((e) => [e.epoch, e.primary])).toEqual([
        [1, 'node-1'],
        [2, 'node-2'],
      ]);
      const role = report.timeline.find((e) => e.event === 'role' && e.node === 'node-2');
      expect(role?.detail).toMatch(/^primary, epoch 2 \(immediate, by node-1\): switchover sw-1-\S+: .*\(drained\)/);
      expect(actual(report, 'failovers')).toBe(1);
      expect(report.tasks).toMatchObject({ lost: 0, duplicateCompletions: 0, deadLettered: 0 });
      // No stage started twice on any node: a task stopped by the drain resumed at its next stage.
      const starts = Object.entries(report.stageStarts).flatMap(([task, stages]) =>
        Object.entries(stages).map(([stage, n]) => ({ task, stage, n })),
      );
      expect(starts).toHaveLength(4 * report.tasks.enqueued);
      expect(starts.filter((s) => s.n !== 1)).toEqual([]);
      expect(report.timeline.filter((e) => e.event === 'restarted')).toEqual([]);
      // The old primary's last act under epoch 1 to the new one's first receive: within a renewal period.
      expect(sw.consumeGapSeconds).not.toBeNull();
      expect(sw.consumeGapSeconds!).toBeLessThanOrEqual(10);
      // No worker restart, no SSM command: the lease alone moved the role.
      expect(actual(report, 'restarts')).toBe(0);
      expect(report.aws.ssm).toBe(0);
    },
    DRILL_MS,
  );
});
