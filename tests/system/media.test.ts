import { killAll } from '../helpers/children';
import { actual, DRILL_MS, drill, passed } from '../helpers/drill';

/**
 * The reference ffmpeg pipeline (examples/ffmpeg) under the fleet, with a real ffmpeg and test
 * episodes made from lavfi sources, at ×5: a standby's self-test runs the four stages within one
 * sample interval. ffmpeg is installed by .ci/run; these fail, never skip, without it.
 */
afterAll(() => killAll());

const MEDIA = ['--time-scale', '5'];

describe('a real media pipeline', () => {
  it(
    'finishes every episode after the primary dies mid-transcode: one delivery each, all valid under ffprobe',
    async () => {
      const { report } = await drill('ffmpeg-failover', MEDIA);
      passed(report);
      expect(actual(report, 'failovers')).toBe(1);
      // The fault waited for ep-2's transcode to read its source past the middle: the read was
      // under way when the primary died, and its task in flight.
      const fault = report.timeline.find((e) => e.event === 'fault');
      expect(fault?.detail).toMatch(/after node-1 read ep-2 past its middle \(1st time\)$/);
      expect(report.timeline.find((e) => e.event === 'at-fault')?.detail).toMatch(/^reading .*ep-2/);
      expect(report.incidents[0]?.inFlight).toBeGreaterThan(0);
      // A task the primary had checkpointed is picked up where it stood, from the artifacts the
      // standby downloads: none is started over.
      expect(report.timeline.filter((e) => e.event === 'restarted')).toEqual([]);
      expect(report.deliveries.map((d) => d.taskId)).toEqual(['task-0001', 'task-0002', 'task-0003', 'task-0004']);
      const lengths = [8, 30, 8, 8];
      report.deliveries.forEach((d, i) => expect(d).toMatchObject({ ok: true, detail: `h264/aac, ${lengths[i]}.0 s` }));
      // Every stage's artifacts reached S3 with their checksums, the standby's included.
      for (const artifacts of Object.values(report.artifacts)) {
        expect(new Set(artifacts.map((a) => a.stage))).toEqual(new Set(['transcode', 'titling', 'metadata']));
      }
    },
    DRILL_MS,
  );

  it(
    'kills and retries a transcode whose HTTP source stops sending mid-file, and neither restarts nor fails over',
    async () => {
      const { report } = await drill('ffmpeg-hang', MEDIA);
      passed(report);
      expect(report.timeline.filter((e) => e.event === 'source-stalled').map((e) => e.detail)).toEqual([
        'ep-2 read past its middle: sending stopped, connection open',
      ]);
      // The hung attempt was stopped by the stage's own clock, hangSeconds (60) after its last work,
      // and its task handed back at once, then done by the same primary. Its work went on up to the
      // stall, and after it for as long as ffmpeg took over buffered input on a busy machine: that
      // time is the scheduler's, so it is not bounded here (tests/agent/stages.test.ts bounds the rule).
      const stalledAt = report.timeline.find((e) => e.event === 'source-stalled')?.t ?? NaN;
      const hung = report.timeline.filter((e) => e.event === 'stage-hung');
      expect(hung.map((e) => e.detail.replace(/ for [\d.]+ s/, ''))).toEqual([
        'task-0002 stage transcode: no work, stopped',
      ]);
      const stoppedAt = hung[0]?.t ?? NaN;
      const idle = Number(/for ([\d.]+) s/.exec(hung[0]?.detail ?? '')?.[1]);
      expect(idle).toBeGreaterThanOrEqual(60);
      expect(idle).toBeLessThanOrEqual(65);
      const lastWork = stoppedAt - idle;
      expect(lastWork).toBeGreaterThanOrEqual(stalledAt - 5);
      const givenBackAt = report.timeline.find((e) => e.event === 'give-back')?.t ?? NaN;
      expect(givenBackAt - stoppedAt).toBeGreaterThanOrEqual(0);
      expect(givenBackAt - stoppedAt).toBeLessThanOrEqual(2);
      expect(report.tasks.givenBack).toBeGreaterThanOrEqual(1);
      expect(report.epochs).toHaveLength(1);
      expect(report.deliveries.every((d) => d.ok)).toBe(true);
      expect(report.deliveries).toHaveLength(3);
    },
    DRILL_MS,
  );
});
