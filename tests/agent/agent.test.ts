import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent } from '../../agent/agent';
import { readProc } from '../../agent/proc';
import { proofPath, workerPidPath, writeJsonAtomic } from '../../agent/registry';
import { bootId } from '../../agent/runtime/boot';
import { mono } from '../../agent/runtime/clock';
import type { TriggerReason, WatchdogTrigger } from '../../lib/aws/trigger';
import { StateStore, type StateStoreOptions } from '../../lib/aws/state-store';
import { inTable } from '../../lib/aws/stores';
import { KEYS } from '../../lib/core/keys';
import { MemoryRecords } from '../helpers/memory-records';
import { buildConfig, type Config } from '../../lib/core/config';
import { memoryLogger } from '../helpers/memory-logger';
import { version as PACKAGE_VERSION } from '../../package.json';
import { MemoryS3 } from '../helpers/memory-s3';

const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001' },
  { name: 'node-2', instanceId: 'mi-00000000000000002' },
];
const LEADER = {
  version: 1,
  primary: 'node-1',
  epoch: 1,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};

/** A 2-node agent on real timers, its periods in tens of milliseconds. */
const fastConfig = (nodeName: string, leaseRenewSeconds: number) => ({
  ...buildConfig(
    {},
    {
      nodes: NODES,
      sampleIntervalSeconds: 0.05,
      syncIntervalSeconds: 0.1,
      completionWindowSeconds: 1,
      leaseRenewSeconds,
      leaseExpirySeconds: 0.3,
      healthPort: 0,
    },
  ),
  nodeName,
  dataDir: mkdtempSync(join(tmpdir(), 'qf-agent-')),
});
/** A renewal every 50 ms, a sample every 200 ms; the lease fences after 550 ms. */
const slowSamples = (nodeName: string) => ({
  ...fastConfig(nodeName, 0.05),
  leaseExpirySeconds: 0.6,
  sampleIntervalSeconds: 0.2,
  syncIntervalSeconds: 0.4,
  heartbeatKeepAliveSeconds: 60,
});

const storeOf = (over: Partial<StateStoreOptions> = {}): StateStore =>
  new StateStore(new S3Client({ region: 'us-west-2' }), {
    bucket: 'b',
    prefix: 'peer-sync/',
    maxObjectBytes: 1 << 20,
    ...over,
  });
type NodeConfig = Config & { nodeName: string };
const agentOf = (config: NodeConfig, store: StateStore, trigger: WatchdogTrigger | null = null): Agent =>
  new Agent({ config, store, queue: null, log: memoryLogger().log, now: Date.now, alerts: null, trigger });
/** This test process stands in for the worker of `dataDir`: a live process named by the pid file. */
const standIn = async (dataDir: string): Promise<string> => {
  const me = await readProc(process.pid);
  await writeJsonAtomic(workerPidPath(dataDir), { pid: process.pid, startTicks: me!.startTicks });
  return `${process.pid}:${me!.startTicks}`;
};

describe('Agent', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.restore());
  const heartbeatPuts = (node: string): number =>
    s3.puts.filter((p) => p.key === `peer-sync/nodes/${node}/heartbeat.json`).length;

  it('renews its lease on its own loop while a peer-sync round hangs: a slow manifest never demotes it', async () => {
    const config = fastConfig('node-1', 0.1);
    s3.set('peer-sync/leader.json', LEADER);
    // Every manifest read hangs: each peer-sync round blocks on its first request.
    const release = s3.stallReads((k) => k.startsWith('peer-sync/manifest'));
    const agent = agentOf(config, storeOf());
    await agent.start();
    await new Promise((r) => setTimeout(r, 1_000));
    const renewals = s3.puts.filter((p) => p.key === 'peer-sync/leader.json').length;
    release();
    await agent.close();
    expect(renewals).toBeGreaterThanOrEqual(6);
    expect((s3.json('peer-sync/leader.json') as { renewals: number }).renewals).toBeGreaterThanOrEqual(6);
  });

  it('pokes the watchdog once when it finds leader.json damaged, instead of waiting for its schedule', async () => {
    const config = fastConfig('node-2', 0.05);
    s3.set('peer-sync/leader.json', '{"version":1,"primary":"node-1"\u0000 damaged');
    const invoke = jest.fn<Promise<void>, [TriggerReason]>(() => Promise.resolve());
    const agent = agentOf(config, storeOf(), { invoke } as unknown as WatchdogTrigger);
    await agent.start();
    await new Promise((r) => setTimeout(r, 500));
    await agent.close();
    // Read at least a few times in half a second; the one damaged version is told once.
    const reads = s3.mock.commandCalls(GetObjectCommand).filter((c) => c.args[0].input.Key === 'peer-sync/leader.json');
    expect(reads.length).toBeGreaterThan(3);
    const told = { node: 'node-2', reason: 'leader-damaged', detail: expect.stringMatching(/leader\.json/) };
    expect(invoke.mock.calls.map(([why]) => why)).toEqual([told]);
  });

  it('as a healthy primary, writes its heartbeat only with news: at once when its worker is gone', async () => {
    const config = slowSamples('node-1');
    s3.set('peer-sync/leader.json', LEADER);
    await standIn(config.dataDir);
    const agent = agentOf(config, storeOf());
    try {
      await agent.start();
      await new Promise((r) => setTimeout(r, 2_000));
      // About 10 samples in 2 s: the first written, the rest only if they bring news.
      const quiet = heartbeatPuts('node-1');
      expect(quiet).toBeLessThanOrEqual(4);
      // The worker is gone: every sample fails, and each is written.
      rmSync(workerPidPath(config.dataDir));
      await new Promise((r) => setTimeout(r, 1_200));
      expect(heartbeatPuts('node-1') - quiet).toBeGreaterThanOrEqual(3);
      const hb = s3.json('peer-sync/nodes/node-1/heartbeat.json') as {
        agentVersion: string;
        samples: { workerProcesses: number }[];
      };
      expect(hb.samples.at(-1)?.workerProcesses).toBe(0);
      // Every heartbeat names the release the node runs.
      expect(hb.agentVersion).toBe(PACKAGE_VERSION);
    } finally {
      await agent.close();
    }
  });

  it("as a standby, writes each sample's number to its beat item and its heartbeat only with news", async () => {
    const c1 = slowSamples('node-1');
    const c2 = slowSamples('node-2');
    // This test process stands in for both workers, and the standby's keeps passing its self-test.
    await standIn(c1.dataDir);
    const worker = await standIn(c2.dataDir);
    const prove = async (): Promise<void> =>
      writeJsonAtomic(proofPath(c2.dataDir), { boot: bootId(), at: mono(), ok: true, worker });
    await prove();
    const proving = setInterval(() => void prove(), 100);
    const table = new MemoryRecords();
    table.items.set(KEYS.leader, { text: JSON.stringify(LEADER), version: 1 });
    const requestRetry = { attempts: 1, baseMs: 1, capMs: 1 };
    const store = storeOf({ requestRetry, records: { owns: inTable, store: table } });
    const primary = agentOf(c1, store);
    const standby = agentOf(c2, store);
    const item = (key: string): Record<string, unknown> =>
      JSON.parse(table.items.get(key)?.text ?? '{}') as Record<string, unknown>;
    try {
      await primary.start();
      await standby.start();
      await new Promise((r) => setTimeout(r, 2_000));
      // About 10 samples in 2 s: each in the beat item, the heartbeat only the first (and one a late
      // self-test may cost).
      expect(item(KEYS.beat('node-2')).seq).toBeGreaterThanOrEqual(7);
      expect(heartbeatPuts('node-2')).toBeLessThanOrEqual(3);
      // The lease says nothing of the standby: the watchdog reads its beat itself.
      expect(item(KEYS.leader)).toMatchObject({ primary: 'node-1' });
      expect(item(KEYS.leader)).not.toHaveProperty('peers');
    } finally {
      clearInterval(proving);
      await Promise.all([primary.close(), standby.close()]);
    }
  });

  it('carries its own figures on each sample: its last sync, CAS races lost, as primary its lease left', async () => {
    const config = fastConfig('node-1', 0.1);
    s3.set('peer-sync/leader.json', LEADER);
    const agent = agentOf(config, storeOf());
    await agent.start();
    await new Promise((r) => setTimeout(r, 300));
    // Another writer's version under the primary: its next renewal loses the race.
    s3.set('peer-sync/leader.json', { ...LEADER, renewals: 1_000 });
    await new Promise((r) => setTimeout(r, 400));
    await agent.close();
    const hb = s3.json('peer-sync/nodes/node-1/heartbeat.json') as { samples: Record<string, unknown>[] };
    const newest = hb.samples.at(-1);
    expect(newest?.syncMs).toEqual(expect.any(Number));
    expect(newest?.casConflicts).toBeGreaterThanOrEqual(1);
    expect(newest?.leaseLeftMs).toBeGreaterThan(0);
    expect(newest?.leaseLeftMs).toBeLessThanOrEqual(config.leaseExpirySeconds * 1000);
  });

  describe('on fake timers', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());
    /** Lets file I/O and the mocked S3 answer between timer steps: fake timers do not wait for libuv. */
    /**
     * Lets every pending callback run before fake time moves on, real file I/O included (the
     * agent reads /proc and its data directory): under load a read can outlast any fixed number
     * of turns of the event loop, and fake time racing ahead of it skipped samples (14 of 20 in
     * a parallel test run).
     */
    const fileIoPending = (): boolean => process.getActiveResourcesInfo().some((r) => r.startsWith('FSReq'));
    const drain = async (): Promise<void> => {
      const giveUp = process.hrtime.bigint() + 5_000_000_000n;
      const more = (i: number): boolean => i < 20 || (fileIoPending() && process.hrtime.bigint() < giveUp);
      for (let i = 0; more(i); i++) await new Promise((r) => setImmediate(r));
    };

    it('samples, renews and syncs each on its own period, and leaves no timer behind once closed', async () => {
      const config = {
        ...buildConfig(
          {},
          {
            nodes: NODES,
            sampleIntervalSeconds: 1,
            syncIntervalSeconds: 4,
            completionWindowSeconds: 4,
            leaseRenewSeconds: 2,
            leaseExpirySeconds: 6,
            healthPort: 0,
          },
        ),
        nodeName: 'node-1',
        dataDir: mkdtempSync(join(tmpdir(), 'qf-agent-')),
      };
      s3.set('peer-sync/leader.json', LEADER);
      const agent = agentOf(config, storeOf());
      const started = agent.start();
      await drain();
      await started;
      const count = (match: (key: string) => boolean): number => s3.puts.filter((p) => match(p.key)).length;
      const leaderAtStart = count((k) => k === 'peer-sync/leader.json');
      // 20 s of the agent's time, in small steps: the SDK's own zero-delay timers are fake too,
      // and each must fire for a request to finish.
      const renewedAt: number[] = [];
      for (let i = 1; i <= 1_000; i++) {
        await jest.advanceTimersByTimeAsync(20);
        await drain();
        if (count((k) => k === 'peer-sync/leader.json') - leaderAtStart > renewedAt.length) renewedAt.push(i * 20);
      }
      const heartbeats = count((k) => k === 'peer-sync/nodes/node-1/heartbeat.json');
      const renewals = count((k) => k === 'peer-sync/leader.json') - leaderAtStart;
      const closing = agent.close();
      await drain();
      await jest.advanceTimersByTimeAsync(1_000);
      await closing;
      const afterClose = count((k) => k === 'peer-sync/nodes/node-1/heartbeat.json');
      await jest.advanceTimersByTimeAsync(60_000);
      await drain();
      // A sample every second, counted from each round's start: 20 s give 20.
      expect(heartbeats).toBeGreaterThanOrEqual(19);
      expect(heartbeats).toBeLessThanOrEqual(21);
      // A renewal a renewal period after the last round ended: never sooner, and never starved by
      // the other loops. A round takes some fake time of its own (the SDK's timers are fake too,
      // and real file writes finish between steps), so the upper bound is loose.
      expect(renewals).toBe(renewedAt.length);
      expect(renewals).toBeGreaterThanOrEqual(5);
      const gaps = renewedAt.slice(1).map((t, i) => t - (renewedAt[i] ?? 0));
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(2_000);
        expect(gap).toBeLessThanOrEqual(4_000);
      }
      expect(jest.getTimerCount()).toBe(0);
      // Nothing more is written once closed.
      expect(count((k) => k === 'peer-sync/nodes/node-1/heartbeat.json')).toBe(afterClose);
    });
  });
});
