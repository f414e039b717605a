import { killAll, processesMatching } from '../helpers/children';
import { drill, passed } from '../helpers/drill';

/** 2,200 s at ×20 is 110 s, and the drain after it. */
const SOAK_MS = 240_000;

/**
 * The soak: 2,200 s of scenario time on 3 nodes, five successive faults, each on
 * whichever node is primary when it strikes: a stall a restart heals, a worker crash, a reboot,
 * a VM crash and a persistent stall. Every fault is healed, redundancy comes back before the
 * next one, nothing is lost and no epoch ever has two consumers. A task a stopped worker held
 * comes back within a visibility timeout and then waits its turn behind the backlog, wherever
 * SQS puts it: its resume is bounded by the failover, that timeout and the backlog's drain.
 */
afterAll(() => killAll());

describe('soak', () => {
  it(
    'heals five successive faults on the primary of the moment, with redundancy back between them',
    async () => {
      const { code, report, stdout } = await drill('soak', [], SOAK_MS);
      passed(report);
      expect(code).toBe(0);
      expect(stdout).toContain('stalled');
      const incidents = report.incidents;
      expect(incidents.map((i) => i.fault)).toEqual([
        'stall-worker',
        'crash-worker',
        'reboot-node',
        'kill-node',
        'stall-worker',
      ]);
      // Each struck the primary of that moment.
      for (const i of incidents)
        expect(report.epochs.find((e) => e.from <= i.faultAt && (e.to === null || e.to > i.faultAt))?.primary).toBe(
          i.node,
        );
      const [stall, crash, reboot, kill, persistent] = incidents;
      // Healed: the stall by its restart, the crash by the supervisor, the rest by a failover.
      expect(stall.recoveredAt).not.toBeNull();
      expect(stall.failoverAt).toBeNull();
      expect(crash.restartedAt! - crash.faultAt).toBeLessThanOrEqual(5);
      for (const i of [reboot, kill, persistent]) expect(i.failoverAt).not.toBeNull();
      // Redundancy back before the next fault struck.
      incidents.forEach((i, n) => {
        const next = incidents[n + 1];
        if (next !== undefined) expect(i.redundantAt!).toBeLessThan(next.faultAt);
      });
      expect(persistent.redundantAt).not.toBeNull();
      expect(report.tasks).toMatchObject({ lost: 0, duplicateCompletions: 0, deadLettered: 0 });
      expect(report.invariants).toEqual({
        singlePrimaryPerEpoch: true,
        noStaleEpochWrites: true,
        noLostTasks: true,
        noDuplicateCompletions: true,
        noFalseFailovers: true,
      });
      // Nothing of the run is left: no node host, agent or worker.
      expect(processesMatching('qf-run-')).toEqual([]);
    },
    SOAK_MS + 10_000,
  );
});
