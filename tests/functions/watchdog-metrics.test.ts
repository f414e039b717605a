import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { handler, resetForTests } from '../../functions/watchdog/handler';
import { readEmf, type EmfValue } from '../../lib/core/metrics/emf';
import { frozen, heartbeat, NODES, working } from '../helpers/fixtures';
import { MemoryS3 } from '../helpers/memory-s3';

const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const notification = { Records: [{ s3: { object: { key: 'peer-sync/nodes/node-1/heartbeat.json' } } }] };
const ssm = mockClient(SSMClient);
const sns = mockClient(SNSClient);
let s3: MemoryS3;

/** What the handler wrote to standard output while `run` ran, one line each. */
const stdoutOf = async (run: () => Promise<unknown>): Promise<string[]> => {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l !== ''),
    );
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines;
};

const valuesOf = (lines: string[]): EmfValue[] => lines.flatMap((l) => readEmf(l) ?? []);
const value = (values: EmfValue[], name: string, node: string | null = null): number | undefined =>
  values.filter((v) => v.name === name && v.node === node).at(-1)?.value;

describe('watchdog metrics (Embedded Metric Format on standard output)', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    ssm.reset();
    sns.reset();
    s3 = new MemoryS3();
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-0001' } });
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
    Object.assign(process.env, {
      FLEET_BUCKET: 'state-bucket',
      FLEET_TOPIC_ARN: 'arn:aws:sns:us-west-2:123456789012:fleet-events',
      FLEET_NODES: JSON.stringify(NODES),
      FLEET_METRICS: 'detailed',
    });
    resetForTests();
    s3.set('peer-sync/leader.json', {
      version: 1,
      primary: 'node-1',
      epoch: 3,
      renewals: 0,
      reason: 'test',
      changedBy: 'test',
    });
  });
  afterAll(() => {
    process.env = saved;
    s3.restore();
    ssm.restore();
    sns.restore();
  });

  it(
    "gives each node's failing samples, role and newest sample, " +
      "and the fleet's epoch and ready standbys, on a scheduled run",
    async () => {
      s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(0, 9)));
      s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
      const values = valuesOf(await stdoutOf(() => handler(scheduled)));
      expect(value(values, 'FailingSamples', 'node-1')).toBe(8);
      expect(value(values, 'FailingSamples', 'node-2')).toBe(0);
      expect(value(values, 'Primary', 'node-1')).toBe(1);
      expect(value(values, 'Primary', 'node-2')).toBe(0);
      expect(value(values, 'HeartbeatAge', 'node-1')).toBe(0);
      expect(value(values, 'Epoch')).toBe(3);
      expect(value(values, 'IncidentsOpened')).toBe(1);
      expect(value(values, 'Restarts')).toBe(1);
      expect(value(values, 'Failovers')).toBe(0);
      expect(value(values, 'InputHeld')).toBe(0);
      // The fixtures' standby has not proven its worker: none is ready.
      expect(value(values, 'ReadyStandbys')).toBe(0);
      expect(values.every((v) => v.node === null || ['node-1', 'node-2'].includes(v.node))).toBe(true);
    },
  );

  it(
    'gives the figures only a node has (peer-sync time, CAS races lost, ' +
      'lease left) from its newest sample, and no lease for a standby',
    async () => {
      const withFigures = (samples: ReturnType<typeof working>, figures: Record<string, number>) =>
        samples.map((x, i) => (i === samples.length - 1 ? { ...x, ...figures } : x));
      s3.set(
        'peer-sync/nodes/node-1/heartbeat.json',
        heartbeat('node-1', withFigures(working(0, 9), { syncMs: 1250, casConflicts: 2, leaseLeftMs: 27_500 })),
      );
      s3.set(
        'peer-sync/nodes/node-2/heartbeat.json',
        heartbeat('node-2', withFigures(working(0, 9), { syncMs: 40, casConflicts: 0 })),
      );
      const values = valuesOf(await stdoutOf(() => handler(scheduled)));
      expect([
        value(values, 'PeerSyncSeconds', 'node-1'),
        value(values, 'CasConflicts', 'node-1'),
        value(values, 'LeaseSecondsLeft', 'node-1'),
      ]).toEqual([1.25, 2, 27.5]);
      expect([
        value(values, 'PeerSyncSeconds', 'node-2'),
        value(values, 'CasConflicts', 'node-2'),
        value(values, 'LeaseSecondsLeft', 'node-2'),
      ]).toEqual([0.04, 0, undefined]);
    },
  );

  it(
    "gives a quiet primary's CPU, memory, " + "peer-sync time and lease left from its heartbeat's newest sample",
    async () => {
      const last = (samples: ReturnType<typeof working>) =>
        samples.map((x, i) =>
          i === samples.length - 1 ? { ...x, cpuPercent: 42, syncMs: 500, leaseLeftMs: 20_000 } : x,
        );
      const hb = heartbeat('node-1', last(working(0, 9)));
      s3.set('peer-sync/nodes/node-1/heartbeat.json', hb);
      s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
      const values = valuesOf(await stdoutOf(() => handler(scheduled)));
      expect([
        value(values, 'WorkerCpu', 'node-1'),
        value(values, 'PeerSyncSeconds', 'node-1'),
        value(values, 'LeaseSecondsLeft', 'node-1'),
      ]).toEqual([42, 0.5, 20]);
      expect(value(values, 'InFlight', 'node-1')).toBeDefined();
    },
  );

  it(
    "gives on a heartbeat's notification only the counts " + 'of what it did, and nothing when it did nothing',
    async () => {
      s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
      s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
      expect(await stdoutOf(() => handler(notification))).toEqual([]);
      s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', frozen(10, 19)));
      const values = valuesOf(await stdoutOf(() => handler(notification)));
      expect(values.map((v) => v.name).sort()).toEqual(['IncidentsOpened', 'Restarts']);
    },
  );

  it('gives no alarmed gauge for what is cordoned: no ReadyStandbys, no age or failing samples', async () => {
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
    s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', frozen(0, 9)));
    process.env.FLEET_METRICS = 'essential';
    resetForTests();
    const before = valuesOf(await stdoutOf(() => handler(scheduled)));
    expect(value(before, 'ReadyStandbys')).toBeDefined();
    expect(value(before, 'HeartbeatAge', 'node-2')).toBeDefined();
    const state = s3.json('peer-sync/watchdog/state.json') as Record<string, unknown>;
    const note = { at: 1, by: 'ops@host', reason: null };
    s3.set('peer-sync/watchdog/state.json', { ...state, maintenance: { paused: null, cordoned: { 'node-2': note } } });
    const after = valuesOf(await stdoutOf(() => handler(scheduled)));
    expect(value(after, 'ReadyStandbys')).toBeUndefined();
    expect(value(after, 'HeartbeatAge', 'node-2')).toBeUndefined();
    expect(value(after, 'FailingSamples', 'node-2')).toBeUndefined();
    expect(value(after, 'HeartbeatAge', 'node-1')).toBeDefined();
    expect(value(after, 'Paused')).toBe(0);
  });

  it('publishes only the essential ones at `essential`, and nothing at `off`', async () => {
    s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', working(0, 9)));
    s3.set('peer-sync/nodes/node-2/heartbeat.json', heartbeat('node-2', working(0, 9)));
    process.env.FLEET_METRICS = 'essential';
    resetForTests();
    const names = new Set(valuesOf(await stdoutOf(() => handler(scheduled))).map((v) => v.name));
    expect([...names].sort()).toEqual(['Epoch', 'FailingSamples', 'HeartbeatAge', 'Paused', 'ReadyStandbys']);
    process.env.FLEET_METRICS = 'off';
    resetForTests();
    expect(await stdoutOf(() => handler(scheduled))).toEqual([]);
  });
});
