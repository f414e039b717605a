import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill, passed } from '../helpers/drill';

/**
 * The faults real fleets meet, each through `fleet drill` on the faithful local
 * cloud: a VM that freezes and wakes, one that reboots, one that is stopped, stages that hang,
 * S3 down for everyone, notifications a minute late, damaged control objects and lost
 * responses. Each checks its scenario passed, then the behaviour the fault exists for.
 */
afterAll(() => killAll());

describe('fault drills', () => {
  it(
    'heals damaged control objects and carries on through lost responses: ' +
      'no dropped restart or alert, no second primary, no stop beyond a lease',
    async () => {
      const { report } = await drill('damaged-objects-lost-responses');
      passed(report);
      const events = (kind: string) => report.timeline.filter((e) => e.event === kind);
      // Every watchdog PUT lost its response: each stall was still restarted (not failed over) and alerted once.
      expect(actual(report, 'restarts')).toBe(2);
      expect(events('stalled')).toHaveLength(2);
      expect(events('restart_sent')).toHaveLength(2);
      // The rebuilt state carried incident numbers on: the second stall has an id (and so an alert) of its own.
      expect(events('state_damaged')).toHaveLength(1);
      // The damaged leader record: alerted once, rebuilt for the node that held the epoch; nobody else took it.
      expect(events('leader_damaged')).toHaveLength(1);
      expect(events('leader_damaged')[0]?.detail).toMatch(/rebuilt: node-1 holds epoch 1/);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1']);
      // The shard of the last task to arrive (task-0018, bucket 130),
      // damaged before it arrives: found when it is synced, rebuilt.
      expect(events('manifest_damaged').length).toBeGreaterThanOrEqual(1);
      expect((report.cloud.lostResponseReset ?? 0) + (report.cloud.lostResponse500 ?? 0)).toBeGreaterThan(20);
    },
    DRILL_MS,
  );

  it(
    'fails over once from a primary frozen for 300 s; woken, it fences itself and writes nothing for the old epoch',
    async () => {
      const { report } = await drill('freeze-primary');
      passed(report);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-2']);
      // After it wakes, node-1 says it no longer holds the role; nothing of epoch 1 follows epoch 2 on the wire.
      const woke = report.timeline.find((e) => e.event === 'fault-cleared')!.t;
      expect(
        report.timeline.some(
          (e) =>
            e.node === 'node-1' &&
            e.event === 'agent-role' &&
            e.t >= woke &&
            /primary → (fenced|standby)/.test(e.detail),
        ),
      ).toBe(true);
      expect(report.invariants.noStaleEpochWrites).toBe(true);
      expect(report.invariants.singlePrimaryPerEpoch).toBe(true);
    },
    DRILL_MS,
  );

  it(
    'alerts the lost redundancy when a standby reboots, and the node comes back as a standby',
    async () => {
      const { report } = await drill('reboot-standby');
      passed(report);
      expect(report.timeline.some((e) => e.node === 'node-2' && e.event === 'redundancy_lost')).toBe(true);
      expect(report.incidents[0]?.recoveredAt).not.toBeNull();
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1']);
    },
    DRILL_MS,
  );

  it(
    'fails over once from a primary whose instance is stopped (Lightsail: stopping, then stopped)',
    async () => {
      const { report } = await drill('stop-primary');
      passed(report);
      expect(actual(report, 'failovers')).toBe(1);
      const states = report.timeline.filter((e) => e.node === 'node-1' && e.event === 'lightsail').map((e) => e.detail);
      expect(states.slice(0, 2)).toEqual(['stopping', 'stopped']);
    },
    DRILL_MS,
  );

  it(
    'stops and retries tasks whose stages hang without using CPU, loses nothing, and neither restarts nor fails over',
    async () => {
      const { report } = await drill('hang-stage-primary');
      passed(report);
      expect(report.tasks.givenBack).toBeGreaterThanOrEqual(1);
      expect(report.tasks.completed).toBe(report.tasks.enqueued);
      expect(report.timeline.some((e) => e.event === 'stalled')).toBe(false);
    },
    DRILL_MS,
  );

  it(
    'takes no action when DynamoDB, the lease, is down for 10 minutes for every ' +
      'node and the watchdog: the primary fences and resumes, nothing dead-lettered',
    async () => {
      const { report } = await drill('dynamodb-outage');
      passed(report);
      expect(
        report.timeline.filter((e) =>
          ['stalled', 'node_silent', 'node_dead', 'redundancy_lost', 'restart_sent', 'promoted'].includes(e.event),
        ),
      ).toEqual([]);
      expect(report.epochs).toHaveLength(1);
      expect(report.tasks.completed).toBe(report.tasks.enqueued);
      expect(report.tasks.deadLettered).toBe(0);
    },
    DRILL_MS,
  );

  it(
    'gives the stall verdict within 30 s of the 8th failing sample while S3 notifications lag by a minute',
    async () => {
      const { report } = await drill('notification-lag-stall');
      passed(report);
      const stall = report.incidents.find((i) => i.fault === 'stall-worker')!;
      expect(stall.windowAt).not.toBeNull();
      expect(stall.detectedAt! - stall.windowAt!).toBeLessThanOrEqual(30);
      expect(report.cloud.directInvokes).toBeGreaterThan(0);
    },
    DRILL_MS,
  );

  it(
    'sends a restart whose watchdog run died between claiming and sending it: ' +
      'the next run sends it, no RESTART_FAILED, no failover',
    async () => {
      const { report } = await drill('watchdog-crash-stall');
      passed(report);
      expect(report.timeline.filter((e) => e.event === 'fault-struck' && /watchdog-crash/.test(e.detail))).toHaveLength(
        1,
      );
      expect(actual(report, 'restarts')).toBe(1);
      expect(actual(report, 'failovers')).toBe(0);
      expect(report.timeline.filter((e) => e.event === 'restart_failed')).toEqual([]);
      const struck = report.timeline.find((e) => e.event === 'fault-struck')!;
      expect(report.timeline.some((e) => e.event === 'restart_sent' && e.t > struck.t)).toBe(true);
    },
    DRILL_MS,
  );

  it(
    'fails over once from a primary whose packets vanish for 120 s, no reset: ' +
      'timeouts end its requests, nothing waits for ever, nothing is lost',
    async () => {
      const { report } = await drill('blackhole-primary');
      passed(report);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-2']);
      expect(report.tasks.lost).toBe(0);
      expect(report.invariants.noStaleEpochWrites).toBe(true);
      // Once the path heals, node-1 says it no longer holds the role.
      const healed = report.timeline.find((e) => e.event === 'fault-cleared')!.t;
      expect(
        report.timeline.some(
          (e) =>
            e.node === 'node-1' &&
            e.event === 'agent-role' &&
            e.t >= healed &&
            /primary → (fenced|standby)/.test(e.detail),
        ),
      ).toBe(true);
    },
    DRILL_MS,
  );
});
