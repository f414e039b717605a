import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Custody } from '../../agent/worker/custody';
import { heldPath, HeldMessages } from '../../agent/worker/held';
import { bootId } from '../../agent/runtime/boot';
import { mono } from '../../agent/runtime/clock';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { QueueMessage } from '../../lib/aws/queue';
import { buildConfig } from '../../lib/core/config';
import type { FleetEvent } from '../../lib/core/events';
import { memoryLogger } from '../helpers/memory-logger';

/** A task queue and a dead-letter queue that record what happens to messages; `failSend` refuses sends. */
const queues = (failSend = false) => {
  /** Bodies sent, and the `failures` attribute each carried. */
  const log = {
    sent: [] as string[],
    dead: [] as string[],
    counts: [] as (number | undefined)[],
    deleted: [] as string[],
    handedBack: [] as string[],
  };
  const send = (to: string[]) => (body: string, failures?: number) =>
    failSend
      ? Promise.reject(new Error('SQS down'))
      : (to.push(body), log.counts.push(failures), Promise.resolve('m-new'));
  const queue = {
    send: send(log.sent),
    delete: (receipt: string) => (log.deleted.push(receipt), Promise.resolve()),
    setVisibility: (receipt: string) => (log.handedBack.push(receipt), Promise.resolve()),
  };
  return { log, queue, deadLetters: { send: send(log.dead) } };
};

const custodyWith = (
  over: { failSend?: boolean; deadLetters?: boolean; maxTaskFailures?: number; maxReceiveCount?: number } = {},
) => {
  const q = queues(over.failSend);
  const alerts: FleetEvent[] = [];
  const topic = { publish: (e: FleetEvent) => (alerts.push(e), Promise.resolve('id')) } as unknown as AlertTopic;
  const config = {
    ...buildConfig({}, { maxTaskFailures: over.maxTaskFailures ?? 3, maxReceiveCount: over.maxReceiveCount ?? 10 }),
    nodeName: 'node-1',
    dataDir: mkdtempSync(join(tmpdir(), 'qf-custody-')),
  };
  const custody = new Custody({
    config,
    queue: q.queue,
    deadLetters: over.deadLetters === false ? null : q.deadLetters,
    log: memoryLogger().log,
    now: Date.now,
    alerts: topic,
  });
  return { custody, config, ...q, alerts };
};

const message = (task: Record<string, unknown> | string, receiveCount = 1): QueueMessage => ({
  id: 'm-1',
  receiptHandle: `r-${receiveCount}`,
  body: typeof task === 'string' ? task : JSON.stringify(task),
  receiveCount,
});

describe('Custody › fail (receive accounting)', () => {
  it(
    'sends a failed task back at once as a new message carrying its count, ' +
      'its body untouched, and deletes the old one',
    async () => {
      const { custody, log, alerts } = custodyWith();
      const body = '{ "taskId": "t1",  "payload": {"source": "s3://media/ep-4.mov", "shots": [1, 2]} }';
      await custody.fail(message(body), 'stage titling exited 1', 4, mono());
      expect(log.sent).toEqual([body]);
      expect(log.counts).toEqual([1]);
      expect(log.deleted).toEqual(['r-1']);
      expect(log.dead).toEqual([]);
      expect(alerts).toEqual([]);
    },
  );

  it('moves a task to the dead-letter queue on its maxTaskFailures-th failure, and alerts', async () => {
    const { custody, log, alerts } = custodyWith();
    await custody.fail(
      { ...message({ taskId: 't1', workSeconds: 1 }), failures: 2 },
      'stage titling exited 1',
      4,
      mono(),
    );
    expect(log.dead).toEqual([JSON.stringify({ taskId: 't1', workSeconds: 1 })]);
    expect(log.counts).toEqual([3]);
    expect(log.sent).toEqual([]);
    expect(log.deleted).toEqual(['r-1']);
    expect(alerts.map((a) => [a.kind, a.summary])).toEqual([
      ['POISON_TASK', 'task t1 failed 3 times. Moved to the dead-letter queue. stage titling exited 1'],
    ]);
  });

  it('still reads the count an earlier release kept in the body', async () => {
    const { custody, log } = custodyWith();
    await custody.fail(message({ taskId: 't1', workSeconds: 1, failures: 2 }), 'boom', 4, mono());
    expect(log.dead).toHaveLength(1);
    expect(log.counts).toEqual([3]);
  });

  it("quotes a stage's stderr tail in the alert, cut to what an alert holds", async () => {
    const { custody, alerts } = custodyWith({ maxTaskFailures: 1 });
    const tail = Array.from({ length: 20 }, (_, i) => `[h264 @ 0x55] error ${i}: ${'x'.repeat(80)}`).join('\n');
    await custody.fail(
      message({ taskId: 't1' }),
      `StageFailedError: stage transcode exited with 1; stderr ends:\n${tail}`,
      4,
      mono(),
    );
    const summary = alerts[0]?.summary ?? '';
    expect(summary).toMatch(
      new RegExp(
        /^task t1 failed 1 times\. Moved to the dead-letter queue\. /.source +
          /StageFailedError: stage transcode exited with 1; stderr ends:\n\[h264 @ 0x55\] error 0/.source,
      ),
    );
    expect(summary.length).toBeLessThanOrEqual(1000);
  });

  it('moves a message no worker can read to the dead-letter queue at once, saying why', async () => {
    const { custody, log, alerts } = custodyWith();
    await custody.fail(message('not json at all'), 'malformed: not valid JSON', 4, mono());
    expect(log.dead).toEqual(['not json at all']);
    expect(alerts.map((a) => [a.kind, a.summary])).toEqual([
      ['POISON_TASK', 'message m-1 is no task message. Moved to the dead-letter queue. malformed: not valid JSON'],
    ]);
  });

  it('hands the message back when it cannot be moved, and deletes nothing', async () => {
    const { custody, log } = custodyWith({ failSend: true });
    await custody.fail(message({ taskId: 't1', workSeconds: 1 }), 'boom', 4, mono());
    expect(log.handedBack).toEqual(['r-1']);
    expect(log.deleted).toEqual([]);
  });

  it("leaves alone a message whose visibility ran out: it may be another consumer's now", async () => {
    const { custody, log } = custodyWith();
    await custody.fail(message({ taskId: 't1', workSeconds: 1 }), 'boom', 4, mono() - 301_000);
    expect([...log.sent, ...log.dead, ...log.deleted, ...log.handedBack]).toEqual([]);
  });

  it('without a dead-letter queue, hands back and alerts only on the last receive the redrive allows', async () => {
    const { custody, log, alerts } = custodyWith({ deadLetters: false, maxReceiveCount: 5 });
    await custody.fail(message({ taskId: 't1', workSeconds: 1 }, 4), 'boom', 4, mono());
    await custody.fail(message({ taskId: 't1', workSeconds: 1 }, 5), 'boom', 4, mono());
    expect(log.handedBack).toEqual(['r-4', 'r-5']);
    expect(alerts.map((a) => a.kind)).toEqual(['POISON_TASK']);
  });

  it(
    'does not dead-letter a task given back three times by fencing and draining: ' +
      'its first failure, on its fifth receive, only sends it back',
    async () => {
      // With the old limit of 5 receives, the redrive would have taken
      // this healthy task on its next receive, alerted as poison.
      const { custody, log, alerts } = custodyWith({ maxReceiveCount: 5 });
      let current = message({ taskId: 't1', workSeconds: 1 });
      for (const why of ['fence', 'drain', 'fence']) {
        await custody.handBack(current, mono());
        current = {
          ...current,
          receiveCount: current.receiveCount + 1,
          receiptHandle: `r-${why}-${current.receiveCount + 1}`,
        };
      }
      current = { ...current, receiveCount: 5 };
      await custody.fail(current, 'stage titling exited 1', 4, mono());
      expect(log.handedBack).toHaveLength(3);
      expect(log.sent).toEqual([JSON.stringify({ taskId: 't1', workSeconds: 1 })]);
      expect(log.counts).toEqual([1]);
      expect(log.dead).toEqual([]);
      expect(alerts).toEqual([]);
    },
  );

  it(
    'dead-letters a task only on its maxTaskFailures-th real failure, ' +
      'however often it was handed back in between (property)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('fence', 'drain', 'duplicate', 'fail'), { maxLength: 30 }),
          fc.integer({ min: 1, max: 5 }),
          async (steps, max) => {
            const { custody, log } = custodyWith({ maxTaskFailures: max });
            // The message as SQS holds it: hand-backs raise its receive count; a failure starts a new message.
            let current = message({ taskId: 't1', workSeconds: 1 });
            let failures = 0;
            for (const step of steps) {
              if (log.dead.length > 0) break;
              if (step !== 'fail') {
                await custody.handBack(current, mono());
                current = {
                  ...current,
                  receiveCount: current.receiveCount + 1,
                  receiptHandle: `r-${current.receiveCount + 1}`,
                };
                continue;
              }
              failures++;
              await custody.fail(current, 'boom', 4, mono());
              const next = log.sent.at(-1);
              const count = log.counts.at(-1) ?? 0;
              if (next !== undefined && log.dead.length === 0)
                current = {
                  id: `m-${failures}`,
                  receiptHandle: `f-${failures}`,
                  body: next,
                  receiveCount: 1,
                  failures: count,
                };
            }
            return log.dead.length === (failures >= max ? 1 : 0) && log.sent.length === Math.min(failures, max - 1);
          },
        ),
        { numRuns: 200 },
      );
    },
  );
});

describe('Custody › takeUp', () => {
  const primaryOf = (epoch: number) => ({
    role: 'primary' as const,
    epoch,
    validUntil: mono() + 60_000,
    boot: bootId(),
  });

  it(
    'has held.json say what it decided by the time it returns: ' +
      'extended deadlines, and nothing of what it handed back',
    async () => {
      const { custody, log, config } = custodyWith();
      const { dataDir, visibilityTimeoutSeconds } = config;
      // The previous worker held two messages under epoch 3, last extended 10 s ago.
      const before = new HeldMessages(dataDir, visibilityTimeoutSeconds * 1000, memoryLogger().log);
      const receivedAt = mono() - 10_000;
      before.hold('t1', message({ taskId: 't1', workSeconds: 1 }, 1), receivedAt, 3);
      before.hold('t2', message({ taskId: 't2', workSeconds: 1 }, 2), receivedAt, 3);
      await before.flushed();
      const left = await custody.leftovers();
      const takenAt = mono();
      // Carried on with (held again from the extension, as the worker's begin does).
      await custody.takeUp(left, primaryOf(3), (m, epoch, sentAt) =>
        custody.held.hold(m.body.includes('t1') ? 't1' : 't2', m, sentAt, epoch),
      );
      // Read at once, as a successor would if this worker were frozen or killed now.
      const file = JSON.parse(readFileSync(heldPath(dataDir), 'utf8')) as {
        messages: Record<string, { invisibleUntilMono: number }>;
      };
      expect(Object.keys(file.messages).sort()).toEqual(['t1', 't2']);
      for (const m of Object.values(file.messages))
        expect(m.invisibleUntilMono).toBeGreaterThanOrEqual(takenAt + visibilityTimeoutSeconds * 1000);
      // (The fake records every visibility change: these are the two extensions.)
      expect(log.handedBack).toEqual(['r-1', 'r-2']);
    },
  );

  it(
    'touches a receipt only as primary of the epoch it was held under (extended, or handed back after a reboot), ' +
      'or of any epoch for a file that names none (an earlier release); else leaves it in held.json (property)',
    async () => {
      const epochOrNull = fc.option(fc.integer({ min: 1, max: 3 }), { nil: null });
      await fc.assert(
        fc.asyncProperty(epochOrNull, epochOrNull, fc.boolean(), async (heldUnder, roleEpoch, sameBoot) => {
          const { custody, log } = custodyWith();
          const begun: number[] = [];
          const left = {
            sameBoot,
            messages: [{ taskId: 't1', message: message({ taskId: 't1', workSeconds: 1 }), epoch: heldUnder }],
          };
          await custody.takeUp(
            left,
            roleEpoch === null ? null : primaryOf(roleEpoch),
            (_m, epoch) => void begun.push(epoch),
          );
          const mine = roleEpoch !== null && (heldUnder === null || heldUnder === roleEpoch);
          expect(log.handedBack).toEqual(mine ? ['r-1'] : []);
          expect(begun).toEqual(mine && sameBoot ? [roleEpoch] : []);
        }),
        { numRuns: 100 },
      );
    },
  );

  it(
    'a fenced node leaves its receipts alone once another primary may ' +
      'hold the message: it is never handed back under the new primary',
    async () => {
      // One message as SQS keeps it: in flight under the receipt of its last receive, or visible.
      const sqs = { visible: false, receipt: 'r-1', changes: [] as string[] };
      const queueOf = (node: string) => ({
        send: () => Promise.resolve('m-new'),
        delete: () => Promise.resolve(),
        setVisibility: (receipt: string, seconds: number) => {
          if (sqs.visible || receipt !== sqs.receipt) return Promise.reject(new Error('MessageNotInflight'));
          sqs.changes.push(`${node}:${seconds}`);
          sqs.visible = seconds === 0;
          return Promise.resolve();
        },
      });
      const base = buildConfig({});
      const custodyOf = (node: string, dataDir: string) =>
        new Custody({
          config: { ...base, nodeName: node, dataDir },
          queue: queueOf(node),
          log: memoryLogger().log,
          now: Date.now,
          alerts: null,
        });
      const dir1 = mkdtempSync(join(tmpdir(), 'qf-custody-'));
      // node-1, primary of epoch 3, held the message; its worker was stopped for the failover and left it held.
      const node1 = custodyOf('node-1', dir1);
      node1.held.hold('t1', message({ taskId: 't1', workSeconds: 1 }), mono(), 3);
      await node1.held.flushed();
      // node-3, primary of epoch 4, received it again under a new receipt.
      sqs.receipt = 'r-2';
      // node-1 rejoins: its next worker starts as a standby; a later one as primary of a later epoch.
      const rejoined = custodyOf('node-1', dir1);
      await rejoined.takeUp(await rejoined.leftovers(), null, () => undefined);
      const promoted = custodyOf('node-1', dir1);
      const carried: string[] = [];
      await promoted.takeUp(await promoted.leftovers(), primaryOf(5), (m) => void carried.push(m.receiptHandle));
      expect(carried).toEqual([]);
      expect(sqs).toMatchObject({ visible: false, changes: [] });
    },
  );
});
