import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { alarmsMonthlyUsd, metricAlarms, type AlarmSettings } from '../../../../lib/core/metrics/alarms';
import { CATALOGUE, METRIC_LEVELS, publishedAt } from '../../../../lib/core/metrics/catalogue';
import { dashboardPanels } from '../../../../lib/core/metrics/panels';
import { metricAlarmsFragment } from '../../../../lib/deploy/metric-alarms';

const SETTINGS: AlarmSettings = {
  standbyAlarmMinutes: 10,
  stallAlarmMinutes: 10,
  heartbeatAlarmSeconds: 120,
  stallSamples: 8,
};
const NODES = ['node-1', 'node-2'];

describe('alarms on the fleet metrics', () => {
  it('gives no alarm when metrics are off, and one for ready standbys and two a node otherwise', () => {
    expect(metricAlarms('off', NODES, SETTINGS)).toEqual([]);
    for (const level of ['essential', 'detailed'] as const) {
      expect(metricAlarms(level, NODES, SETTINGS).map((a) => a.name)).toEqual([
        'no-ready-standby',
        'stall-open-node-1',
        'heartbeat-node-1',
        'stall-open-node-2',
        'heartbeat-node-2',
      ]);
    }
    expect(alarmsMonthlyUsd('essential', 2, SETTINGS)).toBe(0.5);
    expect(alarmsMonthlyUsd('essential', 3, SETTINGS)).toBe(0.7);
  });

  it('reads only metrics the setting publishes, by the dimensions the catalogue gives them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...METRIC_LEVELS),
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), { maxLength: 4 }),
        (level, nodes) => {
          const published = new Set(publishedAt(level).map((m) => m.name));
          for (const a of metricAlarms(level, nodes, SETTINGS)) {
            expect(published.has(a.metric)).toBe(true);
            const spec = CATALOGUE.find((m) => m.name === a.metric)!;
            expect(a.node === null).toBe(spec.scope === 'fleet');
            expect(a.periodSeconds * a.evaluationPeriods).toBeLessThanOrEqual(86_400);
          }
        },
      ),
    );
  });

  it(
    'rounds minutes up to whole 5-minute periods: the watchdog ' +
      'publishes on a schedule two runs of which can be two minutes apart',
    () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 1440 }), (minutes) => {
          const [standby] = metricAlarms('essential', [], { ...SETTINGS, standbyAlarmMinutes: minutes });
          expect(standby.periodSeconds).toBe(300);
          expect(standby.evaluationPeriods * 5).toBeGreaterThanOrEqual(minutes);
          expect((standby.evaluationPeriods - 1) * 5).toBeLessThan(minutes);
        }),
      );
    },
  );

  it('points each alarm at its runbook entry and a dashboard panel that exists', () => {
    const runbook = readFileSync(join(__dirname, '../../../../docs/runbook.md'), 'utf8');
    const titles = new Set(
      dashboardPanels('essential', NODES, { silenceSeconds: 30, stallSamples: 8 }).map((p) => p.title),
    );
    for (const a of metricAlarms('essential', NODES, SETTINGS)) {
      expect(runbook).toContain(`<a id="${a.runbook}"></a>`);
      expect(titles.has(a.panel)).toBe(true);
      expect(runbook).toMatch(new RegExp(`the ${a.runbook} alarm`));
    }
  });

  it("ends each alarm's description with the link to its runbook row", () => {
    const { Resources } = metricAlarmsFragment({
      service: 's',
      stage: 'x',
      bucket: 'b',
      nodes: JSON.stringify([{ name: 'node-1', instanceId: 'mi-00000000000000001' }]),
      metrics: 'essential',
      standbyAlarmMinutes: 10,
      stallAlarmMinutes: 10,
      heartbeatAlarmSeconds: 120,
      runbookUrl: 'https://example.com/ops/runbook.md',
    });
    const descriptions = Object.values(Resources).map(
      (r) => (r as { Properties: { AlarmDescription: string } }).Properties.AlarmDescription,
    );
    expect(descriptions.map((d) => / Runbook: (\S+)$/.exec(d)?.[1])).toEqual([
      'https://example.com/ops/runbook.md#NoReadyStandby',
      'https://example.com/ops/runbook.md#StallOpen',
      'https://example.com/ops/runbook.md#HeartbeatOld',
    ]);
  });

  it('refuses parameters that are not positive numbers, naming the parameter', () => {
    const inputs = {
      service: 's',
      stage: 'x',
      bucket: 'b',
      nodes: '[]',
      metrics: 'essential',
      standbyAlarmMinutes: 10,
      stallAlarmMinutes: '10',
      heartbeatAlarmSeconds: 120,
      runbookUrl: 'https://example.com/ops/runbook.md',
    };
    expect(Object.keys(metricAlarmsFragment(inputs).Resources)).toEqual(['MetricAlarmNoReadyStandby']);
    expect(() => metricAlarmsFragment({ ...inputs, runbookUrl: 'https://x/r.md#top' })).toThrow(/runbookUrl/);
    expect(() => metricAlarmsFragment({ ...inputs, stallAlarmMinutes: 'soon' })).toThrow(/stallAlarmMinutes/);
    expect(() => metricAlarmsFragment({ ...inputs, heartbeatAlarmSeconds: 0 })).toThrow(/heartbeatAlarmSeconds/);
    expect(metricAlarmsFragment({ ...inputs, metrics: 'off' })).toEqual({ Resources: {} });
  });
});
