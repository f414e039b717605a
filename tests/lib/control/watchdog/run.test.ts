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
 * One watchdog run over the memory S3, on a clock the test moves. node-1 held the lease and died;
 * node-2 took the expired lease over. The run gathers, decides and acts, and never sleeps.
 */
describe('runWatchdog: gather, decide, act', () => {
  const T0 = 1_800_000_000_000;
  let s3: MemoryS3;
  let now: number;
  const slept: number[] = [];
  const published: FleetEvent[] = [];

  const deps = (): WatchdogDeps =>
    ({
      config: buildConfig({}, { nodes: NODES }),
      store: new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      }),
      alerts: { publish: (e: FleetEvent) => Promise.resolve(published.push(e)) },
      commands: {
        send: () => Promise.resolve('cmd-1'),
        result: () => Promise.resolve({ status: 'InProgress' }),
        findSent: () => Promise.resolve(null),
        cancel: () => Promise.resolve(),
      },
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

  const taken: Leader = {
    version: 1,
    primary: 'node-2',
    epoch: 2,
    renewals: 0,
    reason: 'lease of node-1 (epoch 1) expired: standby took over',
    changedBy: 'node-2',
    previous: 'node-1',
    handover: 'immediate',
    replaces: { epoch: 1, renewals: 9 },
  };
  // Samples 0-8 of node-1, 15 s apart by its own monotonic clock: 8 was taken 15 s after 7.
  const node1: Heartbeat = heartbeat(
    'node-1',
    working(0, 9).map((s: Sample) => ({ ...s, mono: 50_000 + s.seq * 15_000 })),
    'b1',
  );
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
    const quiet = {
      counter: { ...emptyCounter(), boot: 'b1' },
      incident: null,
      restartTimes: [],
      rejoinTimes: [],
      incidents: 0,
    };
    s3.set('peer-sync/watchdog/state.json', {
      version: 2,
      revision: 5,
      lastFailoverAt: null,
      judgedAt: T0 - 12_000,
      lease: { primary: 'node-1', epoch: 1, renewals: 9, changedAt: T0 - 40_000 },
      nodes: {
        'node-1': { ...quiet, newest: { boot: 'b1', seq: 8, changedAt: T0 - 12_000 } },
        'node-2': {
          ...quiet,
          counter: { ...quiet.counter, boot: 'b2' },
          newest: { boot: 'b2', seq: 8, changedAt: T0 },
        },
      },
    });
  });
  afterAll(() => s3.restore());

  it("alerts the takeover of node-1's expired lease in the run it triggers, without sleeping", async () => {
    await runWatchdog(deps());
    expect(slept).toEqual([]);
    expect(published.map((e) => `${e.kind} ${e.node}`)).toEqual(['NODE_SILENT node-1']);
    expect(published[0]?.summary).toContain('node-2 took it over');
  });

  it('gathers and decides again when its state write loses a race, and alerts once', async () => {
    const d = deps();
    let asked = 0;
    d.probe = {
      confirm: () => {
        asked += 1;
        // Another run stores a judgement meanwhile, the first time only: this run's write loses its race.
        if (asked === 1) {
          const state = s3.json('peer-sync/watchdog/state.json') as { revision: number };
          s3.set('peer-sync/watchdog/state.json', { ...state, revision: state.revision + 1 });
        }
        return Promise.resolve({ instance: 'running', ssm: 'online' });
      },
    } as unknown as WatchdogDeps['probe'];
    await runWatchdog(d);
    expect(asked).toBe(2);
    expect(published.map((e) => e.kind)).toEqual(['NODE_SILENT']);
    expect(slept).toEqual([]);
  });
});
