import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill, passed } from '../helpers/drill';
import type { Report } from '../../lib/core/drill/report';
import { EVENT_KINDS } from '../../lib/core/events';

/**
 * Maintenance drills: an operator's `fleet pause` and `fleet cordon` (run by the scenario's
 * `operator` list) meet a real fault. The watchdog still alerts but acts only where allowed.
 */
afterAll(() => killAll());

/** The timeline's entries of the watchdog's events (kinds in lower case). */
const watchdogEvents = (report: Report): Report['timeline'] => {
  const kinds = new Set(EVENT_KINDS.map((k) => k.toLowerCase()));
  return report.timeline.filter((e) => kinds.has(e.event));
};

/** The scenario second of the operator's action, from the timeline. */
const operatorAt = (report: Report, action: string): number => {
  const entry = report.timeline.find((e) => e.node === 'operator' && e.event === action);
  if (entry === undefined) throw new Error(`the operator's ${action} is not on the timeline`);
  return entry.t;
};

describe('maintenance drills', () => {
  it(
    'pause during a persistent stall: alerted, not restarted nor failed over; resumed, the ladder goes on',
    async () => {
      const { report } = await drill('pause-during-stall');
      passed(report);
      const [pausedAt, resumedAt] = [operatorAt(report, 'pause'), operatorAt(report, 'resume')];
      const stall = report.incidents[0];
      // The stall was alerted while paused, and said so.
      const stalled = report.timeline.find((e) => e.node === 'node-1' && e.event === 'stalled');
      expect(stalled?.t).toBeGreaterThan(pausedAt);
      expect(stalled?.t).toBeLessThan(resumedAt);
      expect(stalled?.detail).toMatch(/^PAUSED: /);
      // Nothing was done about it until the resume; then the restart, and the failover after it.
      const sent = watchdogEvents(report).filter((e) => e.event === 'restart_sent');
      expect(sent.map((e) => e.t).every((t) => t >= resumedAt)).toBe(true);
      expect(actual(report, 'restarts')).toBe(1);
      expect(stall.restartedAt!).toBeGreaterThanOrEqual(resumedAt);
      expect(stall.failoverAt!).toBeGreaterThan(stall.restartedAt!);
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-2']);
      expect(report.tasks.lost).toBe(0);
    },
    DRILL_MS,
  );

  it(
    'a cordoned standby is rebooted: no incident, and when the primary dies it is passed over',
    async () => {
      const { report } = await drill('cordoned-standby-reboot');
      passed(report);
      expect(
        report.timeline.some((e) => e.node === 'node-2' && e.event === 'fault' && /reboot-node/.test(e.detail)),
      ).toBe(true);
      // node-2's reboot opened no incident and drew no restart.
      expect(watchdogEvents(report).filter((e) => e.node === 'node-2')).toEqual([]);
      expect(report.timeline.filter((e) => e.node === 'node-2' && e.event === 'ssm')).toEqual([]);
      // node-2 has the better priority and was back before the kill, yet node-3 took over.
      expect(report.epochs.map((e) => e.primary)).toEqual(['node-1', 'node-3']);
      expect(report.tasks.lost).toBe(0);
    },
    DRILL_MS,
  );
});
