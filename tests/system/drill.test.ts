import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { regressions, type RequestFigures } from '../../lib/core/drill/requests';
import { killAll, processesMatching, ROOT, runFleet } from '../helpers/children';
import { DRILL_MS, DRILL_OUT, drill, scenarioFile } from '../helpers/drill';

/**
 * `fleet drill` end to end (a healed stall, a crashed worker and a dead primary are in the
 * soak, tests/system/soak.test.ts): the CLI, the local cloud, real node processes, the real watchdog
 * handler. Drills are timing-sensitive, so they run one after another in this file.
 */
const out = DRILL_OUT;
const scenario = scenarioFile;

afterAll(() => killAll());

describe('fleet drill: bad input', () => {
  const write = (body: unknown): string => {
    const file = join(out, `bad-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
    return file;
  };

  it.each([
    [
      'an unknown expectation key',
      { name: 'x', nodes: 2, seconds: 60, workload: { tasks: 1, meanTaskSeconds: 10 }, expect: { restartz: 1 } },
      'expect.restartz',
    ],
    ['a bad node count', { name: 'x', nodes: 0, seconds: 60, workload: { tasks: 1, meanTaskSeconds: 10 } }, 'nodes'],
    [
      'a fault kind that does not exist',
      {
        name: 'x',
        nodes: 2,
        seconds: 60,
        workload: { tasks: 1, meanTaskSeconds: 10 },
        faults: [{ at: 1, kind: 'meteor' }],
      },
      'faults.0.kind',
    ],
    ['text that is not JSON', '{ "name": ', 'not valid JSON'],
  ])('exits 2 on %s and names it', async (_name, body, needle) => {
    const res = await runFleet(['drill', '--scenario', write(body)], 30_000);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(needle);
  });

  it('exits 2 on a missing file and on a bad --time-scale', async () => {
    expect((await runFleet(['drill', '--scenario', join(out, 'nope.json')], 30_000)).code).toBe(2);
    const res = await runFleet(['drill', '--scenario', scenario('steady-no-fault'), '--time-scale', 'fast'], 30_000);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--time-scale');
  });
});

describe('fleet drill on the local cloud', () => {
  it(
    'restarts nothing in a healthy run',
    async () => {
      const { code, report } = await drill('steady-no-fault');
      expect(report.ok).toBe(true);
      expect(code).toBe(0);
      expect(report.expectations.find((e) => e.name === 'restarts')?.actual).toBe(0);
      expect(report.timeline.some((e) => e.event === 'stalled')).toBe(false);
      // Nothing of the run is left: no node host, agent or worker.
      expect(processesMatching('qf-run-')).toEqual([]);
      // The request-count guard: no figure per healthy hour or per task grew more than
      // 25% over bench/request-baseline.json (npx tsx bench/request-counts.ts measures it again).
      const baseline = JSON.parse(readFileSync(join(ROOT, 'bench/request-baseline.json'), 'utf8')) as Pick<
        RequestFigures,
        'perHour' | 'perTask'
      >;
      expect(regressions(report.requests, baseline)).toEqual([]);
      // Counted by purpose on the wire: the lease and the watchdog's state (in
      // DynamoDB, never in S3), heartbeats, queue polls, the tasks' own writes.
      expect(
        Object.keys(report.requests.counts).filter(
          (label) => label.startsWith('s3.') && (label.endsWith(':lease') || label === 's3.PUT:watchdog'),
        ),
      ).toEqual([]);
      // Only the runs that found no state in the table look for one written before the upgrade
      // (StateStore.routed), until the first run stores it: a handful, not one a run.
      expect(report.requests.counts['s3.GET:watchdog'] ?? 0).toBeLessThan(20);
      for (const label of [
        'dynamodb.WRU:lease',
        'dynamodb.RRU:lease',
        'dynamodb.WRU:watchdog',
        'dynamodb.RRU:watchdog',
        's3.PUT:heartbeat',
        's3.GET:heartbeat',
        'sqs:poll',
        'sqs:send',
        's3.PUT:task',
      ])
        expect(report.requests.counts[label]).toBeGreaterThan(0);
      expect(report.requests.counts['s3.PUT:other']).toBeUndefined();
      // The watchdog's metrics, as CloudWatch would have them: one primary, one epoch, and no node
      // ever as old as the silence threshold (two sample intervals, 30 s) when the watchdog looked.
      const series = (name: string, node: string | null = null) =>
        report.metrics.find((m) => m.name === name && m.node === node)?.points.map(([, v]) => v) ?? [];
      expect(new Set(series('Epoch'))).toEqual(new Set([1]));
      expect(new Set(series('Primary', 'node-1'))).toEqual(new Set([1]));
      expect(new Set(series('Primary', 'node-2'))).toEqual(new Set([0]));
      for (const node of ['node-1', 'node-2']) {
        expect(series('HeartbeatAge', node).length).toBeGreaterThan(5);
        expect(Math.max(...series('HeartbeatAge', node))).toBeLessThan(30);
      }
      expect(series('Restarts').filter((n) => n > 0)).toEqual([]);
    },
    DRILL_MS,
  );
});
