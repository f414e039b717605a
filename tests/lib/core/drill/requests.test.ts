import fc from 'fast-check';
import {
  purposeOfKey,
  purposeOfSqsAction,
  regressions,
  requestFigures,
  type RequestUnits,
} from '../../../../lib/core/drill/requests';
import { KEYS } from '../../../../lib/core/keys';

describe('request purposes', () => {
  it.each([
    [KEYS.leader, 'lease'],
    [KEYS.heartbeat('node-1'), 'heartbeat'],
    [KEYS.watchdogState, 'watchdog'],
    [KEYS.manifest, 'sync'],
    [KEYS.manifestShard(7), 'sync'],
    [KEYS.archive('2026-12-02', 3), 'sync'],
    [KEYS.checkpoint('ep-1'), 'task'],
    [KEYS.done('ep-1'), 'task'],
    [KEYS.output('ep-1', 'transcode'), 'task'],
    [KEYS.event('inc-1', 'STALLED'), 'incident'],
    [KEYS.quarantine('leader.json', 1), 'incident'],
    ['somewhere/else.json', 'other'],
  ])('%s is for %s, under any state prefix', (key, purpose) => {
    expect(purposeOfKey(key)).toBe(purpose);
    expect(purposeOfKey(`peer-sync/${key}`)).toBe(purpose);
    expect(purposeOfKey(`fleets/a/peer-sync/${key}`)).toBe(purpose);
  });

  it('tells a task that lives in the key from one that only looks like it', () => {
    expect(purposeOfKey('peer-sync/nodes/node-1/heartbeat.json.bak')).toBe('other');
    expect(purposeOfKey('peer-sync/myleader.json')).toBe('other');
  });

  it('bills moving a task per task, and polling and measuring per hour', () => {
    for (const action of [
      'SendMessage',
      'DeleteMessage',
      'DeleteMessageBatch',
      'ChangeMessageVisibility',
      'ChangeMessageVisibilityBatch',
    ])
      expect(purposeOfSqsAction(action)).toBe('send');
    for (const action of ['ReceiveMessage', 'GetQueueAttributes', 'GetQueueUrl'])
      expect(purposeOfSqsAction(action)).toBe('poll');
  });
});

describe('requestFigures', () => {
  it('puts the control loop per hour and the work per task, per billed unit', () => {
    const f = requestFigures(
      {
        's3.PUT:lease': 360,
        's3.GET:heartbeat': 720,
        's3.LIST:sync': 36,
        'sqs:poll': 180,
        's3.PUT:task': 90,
        's3.HEAD:task': 30,
        'sqs:send': 60,
        'sns:other': 5,
        'dynamodb.WRU:lease': 180,
        'dynamodb.RRU:lease': 360.5,
        dynamodb: 540,
      },
      1800,
      30,
      120,
    );
    expect(f.perHour).toEqual({ s3Get: 1440, s3Put: 792, sqs: 360, ddbRead: 721, ddbWrite: 360, lambda: 240 });
    expect(f.perTask).toEqual({ s3Get: 1, s3Put: 3, sqs: 2, ddbRead: 0, ddbWrite: 0, lambda: 0 });
  });

  it('has no per-task figure for a run that completed nothing', () => {
    expect(requestFigures({ 's3.PUT:task': 4 }, 60, 0, 0).perTask).toEqual({
      s3Get: 0,
      s3Put: 0,
      sqs: 0,
      ddbRead: 0,
      ddbWrite: 0,
      lambda: 0,
    });
  });
});

describe('regressions', () => {
  const UNITS = ['s3Get', 's3Put', 'sqs', 'ddbRead', 'ddbWrite', 'lambda'] as const;
  const unitsArb = fc.record({
    s3Get: fc.nat(100_000),
    s3Put: fc.nat(100_000),
    sqs: fc.nat(100_000),
    ddbRead: fc.nat(100_000),
    ddbWrite: fc.nat(100_000),
    lambda: fc.nat(10_000),
  });
  const figures = (perHour: RequestUnits, perTask: RequestUnits) => ({ perHour, perTask });

  it('passes every figure within 25% of its baseline, and flags exactly those above it', () => {
    fc.assert(
      fc.property(
        unitsArb,
        unitsArb,
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 12, maxLength: 12 }),
        (hour, task, factors) => {
          const scale = (u: RequestUnits, f: number[]): RequestUnits =>
            Object.fromEntries(UNITS.map((unit, i) => [unit, u[unit] * (f[i] ?? 1)])) as unknown as RequestUnits;
          const actual = figures(scale(hour, factors.slice(0, 6)), scale(task, factors.slice(6)));
          const found = new Set(regressions(actual, figures(hour, task)).map((r) => r.figure));
          for (const scope of ['perHour', 'perTask'] as const) {
            for (const unit of UNITS) {
              const base = (scope === 'perHour' ? hour : task)[unit];
              const over = base === 0 ? actual[scope][unit] > 1 : actual[scope][unit] > base * 1.25;
              expect(found.has(`${scope}.${unit}`)).toBe(over);
            }
          }
        },
      ),
    );
  });

  it('names the figure, its baseline and how far it grew', () => {
    const base = figures(
      { s3Get: 100, s3Put: 40, sqs: 10, ddbRead: 50, ddbWrite: 20, lambda: 5 },
      { s3Get: 6, s3Put: 9, sqs: 3, ddbRead: 0, ddbWrite: 0, lambda: 0 },
    );
    const now = figures(
      { s3Get: 100, s3Put: 60, sqs: 10, ddbRead: 50, ddbWrite: 20, lambda: 5 },
      { s3Get: 6, s3Put: 9, sqs: 3, ddbRead: 0, ddbWrite: 0, lambda: 2 },
    );
    expect(regressions(now, base)).toEqual([
      { figure: 'perHour.s3Put', baseline: 40, actual: 60, ratio: 1.5 },
      { figure: 'perTask.lambda', baseline: 0, actual: 2, ratio: Infinity },
    ]);
  });
});
