import { S3Client } from '@aws-sdk/client-s3';
import { StateStore } from '../../../../lib/aws/state-store';
import { buildConfig } from '../../../../lib/core/config';
import type { FleetEvent } from '../../../../lib/core/events';
import { emptyCounter } from '../../../../lib/core/fleet/stall';
import type { Heartbeat, Leader, Sample } from '../../../../lib/core/schemas';
import type { WatchdogDeps } from '../../../../lib/control/watchdog/deps';
import { runWatchdog } from '../../../../lib/control/watchdog/run';
import { heartbeat, NODES, working } from '../../../helpers/fixtures';
import { memoryLogger } from '../../../helpers/memory-logger';
import { MemoryS3 } from '../../../helpers/memory-s3';

/**
 * One watchdog run over the memory S3, on a clock the test moves: its sleep moves the clock and
 * returns at once. node-1 held the lease, wrote a heartbeat with sample 8 after the renewal that
 * carried sample 7, and died; node-2 took the lapsed lease, saying sample 7 was quiet 30.5 s.
 */
describe('runWatchdog: a run that waits for a node the primary reports quiet', () => {
  const T0 = 1_800_000_000_000;
  let s3: MemoryS3;
  let now: number;
  const slept: number[] = [];
  const published: FleetEvent[] = [];

  const deps = (): WatchdogDeps =>
    ({
      config: buildConfig({}, { nodes: NODES }),
      store: new StateStore(new S3Client({ region: 'us-west-2' }), { bucket: 'b', prefix: 'peer-sync/', maxObjectBytes: 1 << 20 }),
      alerts: { publish: (e: FleetEvent) => Promise.resolve(published.push(e)) },
      commands: { send: () => Promise.resolve('cmd-1'), result: () => Promise.resolve({ status: 'InProgress' }), findSent: () => Promise.resolve(null), cancel: () => Promise.resolve() },
      probe: { confirm: () => Promise.resolve({ instance: 'running', ssm: 'online' }) },
      dns: null,
      intake: null,
      log: memoryLogger().log,
      now: () => now,
      sleep: (ms: number) => {
        slept.push(ms);
        now += ms;
        return Promise.resolve();
      },
      sight: { failing: false },
      metrics: () => undefined,
    }) as unknown as WatchdogDeps;

  const taken: Leader = { version: 1, primary: 'node-2', epoch: 2, renewals: 0, reason: 'lease of node-1 (epoch 1) expired: standby took over', changedBy: 'node-2', previous: 'node-1', handover: 'immediate', replaces: { epoch: 1, renewals: 9 }, peers: { 'node-1': { boot: 'b1', seq: 7, quietMs: 30_500 } } };
  // Samples 0-8 of node-1, 15 s apart by its own monotonic clock: 8 was taken 15 s after 7.
  const node1: Heartbeat = heartbeat('node-1', working(0, 9).map((s: Sample) => ({ ...s, mono: 50_000 + s.seq * 15_000 })), 'b1');
  const node2: Heartbeat = { ...heartbeat('node-2', working(0, 9), 'b2'), role: 'primary' };

  beforeEach(() => {
    s3 = new MemoryS3();
    now = T0;
    slept.length = 0;
    published.length = 0;
    s3.set('peer-sync/leader.json', taken);
    s3.set('peer-sync/nodes/node-1/heartbeat.json', node1);
    s3.set('peer-sync/nodes/node-2/heartbeat.json', node2);
    // The watchdog saw sample 8 first 12 s ago (its notification came late), node-2's just now.
    const quiet = { counter: { ...emptyCounter(), boot: 'b1' }, incident: null, restartTimes: [], rejoinTimes: [], incidents: 0 };
    s3.set('peer-sync/watchdog/state.json', {
      version: 2,
      revision: 5,
      lastFailoverAt: null,
      judgedAt: T0 - 12_000,
      nodes: { 'node-1': { ...quiet, seen: { boot: 'b1', seq: 8, at: T0 - 12_000 } }, 'node-2': { ...quiet, counter: { ...quiet.counter, boot: 'b2' }, seen: { boot: 'b2', seq: 8, at: T0 } } },
    });
  });
  afterAll(() => s3.restore());

  it('judges the old primary lost after one wait, counting the wait on top of the quiet the same record states', async () => {
    await runWatchdog(deps());
    // Sample 8 is credited 30.5 - 15 = 15.5 s of quiet: the run waits the 14.5 s left, once.
    expect(slept).toEqual([14_500]);
    expect(published.map((e) => `${e.kind} ${e.node}`)).toContain('REDUNDANCY_LOST node-1');
  });

  it('keeps what the record said before the wait when its state write loses a race and the run tries again', async () => {
    const d = deps();
    d.sleep = (ms: number) => {
      slept.push(ms);
      now += ms;
      // Another run stores the same judgement meanwhile: this run's write loses its race.
      const state = s3.json('peer-sync/watchdog/state.json') as { revision: number };
      s3.set('peer-sync/watchdog/state.json', { ...state, revision: state.revision + 1 });
      return Promise.resolve();
    };
    await runWatchdog(d);
    expect(slept).toEqual([14_500]);
    expect(published.map((e) => `${e.kind} ${e.node}`)).toContain('REDUNDANCY_LOST node-1');
  });

  it('goes by both records when the primary renewed during the wait: the first one\'s word, dated from the first look, still counts', async () => {
    const d = deps();
    d.sleep = (ms: number) => {
      slept.push(ms);
      now += ms;
      // node-2 renewed meanwhile, saying the same (its peer watch goes on from the takeover).
      s3.set('peer-sync/leader.json', { ...taken, renewals: 1, peers: { 'node-1': { boot: 'b1', seq: 7, quietMs: 40_500 } } });
      return Promise.resolve();
    };
    await runWatchdog(d);
    expect(slept).toEqual([14_500]);
    expect(published.map((e) => `${e.kind} ${e.node}`)).toContain('REDUNDANCY_LOST node-1');
  });
});
