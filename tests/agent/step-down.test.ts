import fc from 'fast-check';
import { readyPeers, StepDown } from '../../agent/step-down';
import type { AlertTopic } from '../../lib/aws/alerts';
import { Reach } from '../../lib/aws/reach';
import { buildConfig } from '../../lib/core/config';
import type { FleetEvent } from '../../lib/core/events';
import type { Beat } from '../../lib/core/schemas';
import { memoryLogger } from '../helpers/memory-logger';

const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001' },
  { name: 'node-2', instanceId: 'mi-00000000000000002' },
  { name: 'node-3', instanceId: 'mi-00000000000000003' },
];
const beat = (seq: number, unreachable?: Beat['unreachable']): Beat => ({
  version: 1,
  boot: 'b',
  seq,
  ...(unreachable === undefined ? {} : { unreachable }),
});

describe('readyPeers', () => {
  it('names a node whose beat moved between two reads and that reaches S3 and SQS', () => {
    const before = new Map([
      ['node-2', beat(1)],
      ['node-3', beat(1)],
    ]);
    const after = new Map([
      ['node-2', beat(2)],
      ['node-3', beat(1)],
    ]);
    expect(readyPeers(before, after)).toEqual(['node-2']);
  });

  it('never names a node that says it cannot reach S3 or SQS, nor one seen only once (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.subarray(['s3', 'sqs', 'dynamodb'] as const, { minLength: 1 }),
        (seq, unreachable) => {
          const cannot = unreachable.includes('s3') || unreachable.includes('sqs');
          expect(readyPeers(new Map([['n', beat(seq)]]), new Map([['n', beat(seq + 1, unreachable)]]))).toEqual(
            cannot ? [] : ['n'],
          );
          expect(readyPeers(new Map(), new Map([['n', beat(seq + 1)]]))).toEqual([]);
        },
      ),
    );
  });
});

describe('StepDown', () => {
  /** node-1 as primary, S3 out of reach since t = 0; the others' beats as `beats` says at each read. */
  const setUp = (beats: () => Map<string, Beat>) => {
    let t = 0;
    const reach = new Reach(() => t);
    reach.record('s3', 'failed');
    const alerts: FleetEvent[] = [];
    const topic = { publish: (e: FleetEvent) => (alerts.push(e), Promise.resolve('id')) } as unknown as AlertTopic;
    const reads: string[] = [];
    const store = {
      read: (key: string) => {
        reads.push(key);
        const node = /nodes\/([^/]+)\/beat/.exec(key)?.[1] ?? '';
        const b = beats().get(node);
        return Promise.resolve(b === undefined ? null : { value: b, etag: 'e' });
      },
    };
    const config = { ...buildConfig({}, { nodes: NODES }), nodeName: 'node-1' };
    const stepDown = new StepDown({
      config,
      store: store as never,
      reach,
      log: memoryLogger().log,
      alerts: topic,
      now: () => 1_000,
    });
    const resigned: number[] = [];
    const judge = async (at: number): Promise<void> => {
      t = at;
      await stepDown.judge(7, () => Promise.resolve(void resigned.push(at)));
    };
    return { judge, resigned, alerts, reads, reach, setT: (at: number) => (t = at) };
  };

  it(
    'reads nothing and keeps the role while S3 has been ' + 'out of reach for less than a stall window (2 min)',
    async () => {
      const { judge, resigned, reads } = setUp(() => new Map());
      await judge(119_000);
      expect(resigned).toEqual([]);
      expect(reads).toEqual([]);
    },
  );

  it('gives the role up once S3 was out of reach a stall window and another node can work', async () => {
    let seq = 1;
    const { judge, resigned, alerts } = setUp(
      () =>
        new Map([
          ['node-2', beat(seq++)],
          ['node-3', beat(1, ['s3'])],
        ]),
    );
    await judge(120_000);
    expect(resigned).toEqual([]);
    await judge(130_000);
    expect(resigned).toEqual([130_000]);
    expect(alerts).toEqual([]);
  });

  it(
    'keeps the role when no other node can work (an outage of S3): ' +
      'one OUTAGE alert, and RECOVERED once S3 answers',
    async () => {
      let seq = 1;
      const { judge, resigned, alerts, reach } = setUp(
        () =>
          new Map([
            ['node-2', beat(seq++, ['s3'])],
            ['node-3', beat(seq++, ['s3', 'dynamodb'])],
          ]),
      );
      for (let at = 120_000; at <= 300_000; at += 10_000) await judge(at);
      expect(resigned).toEqual([]);
      expect(alerts.map((a) => [a.kind, a.node, a.epoch])).toEqual([['OUTAGE', 'node-1', 7]]);
      expect(alerts[0]?.summary).toMatch(/node-1 has not reached S3 for 130 s and no other node reports it can/);
      reach.record('s3', 'answered');
      await judge(310_000);
      await judge(320_000);
      expect(alerts.map((a) => a.kind)).toEqual(['OUTAGE', 'RECOVERED']);
      expect(alerts[1]?.incidentId).toBe(alerts[0]?.incidentId);
    },
  );
});
