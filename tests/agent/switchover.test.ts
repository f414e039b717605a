import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { LeaseKeeper } from '../../agent/lease-keeper';
import { emptyRegistry, registryPath, rolePath, writeJsonAtomic } from '../../agent/registry';
import { SwitchoverAgent } from '../../agent/switchover';
import { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { emptyWatchdogState } from '../../lib/core/fleet/watchdog-state';
import type { Leader } from '../../lib/core/schemas';
import { memoryLogger } from '../helpers/memory-logger';
import { MemoryS3 } from '../helpers/memory-s3';

/**
 * The agents' side of a switchover: two lease keepers and their SwitchoverAgents over the memory
 * S3, on a clock the test moves (renew 10 s, expiry 30 s, drain bound 15 s). No timer runs.
 */
const NODES = [1, 2].map((i) => ({ name: `node-${i}`, instanceId: `mi-0000000000000000${i}`, priority: i }));
const LEADER: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 1,
  renewals: 0,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const REQUEST = { id: 'sw-1-1-ab', to: 'node-2', epoch: 1, by: 'ops', reason: 'kernel update' };
const KEY = 'peer-sync/leader.json';
const serverError = (): Error =>
  Object.assign(new Error('InternalError'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } });

let s3: MemoryS3;
let t: number;
const node = (name: string) => {
  const config = {
    ...buildConfig({}, { nodes: NODES }),
    nodeName: name,
    dataDir: mkdtempSync(join(tmpdir(), 'qf-sw-')),
  };
  const store = new StateStore(new S3Client({ region: 'us-west-2' }), {
    bucket: 'b',
    prefix: 'peer-sync/',
    maxObjectBytes: 1 << 20,
    requestRetry: { attempts: 1, baseMs: 1, capMs: 1 },
  });
  const log = memoryLogger().log;
  const lease = new LeaseKeeper({ config, store, log, ready: () => true, clock: () => t });
  const agent = new SwitchoverAgent({ config, log, lease, clock: () => t });
  /** One look of the agent's lease loop: a round when due, then the switchover's step. */
  const look = async (): Promise<void> => {
    if (lease.renewalDue()) await lease.round();
    else await lease.publish();
    await agent.tick();
  };
  const role = () => JSON.parse(readFileSync(rolePath(config.dataDir), 'utf8')) as { role: string; draining?: boolean };
  const drained = (epoch: number) =>
    writeJsonAtomic(registryPath(config.dataDir), { ...emptyRegistry(), drained: epoch });
  return { lease, agent, look, role, drained };
};
const leader = (): Leader => s3.json(KEY) as Leader;

beforeEach(() => {
  s3 = new MemoryS3();
  s3.set(KEY, LEADER);
  t = 1_000_000;
});
afterAll(() => s3.restore());

describe('SwitchoverAgent', () => {
  it('carries a request through renewal, drain and handover: target primary, old one fenced', async () => {
    const [one, two] = [node('node-1'), node('node-2')];
    await one.look();
    await two.look();
    expect(one.role().role).toBe('primary');
    // The operator's CAS write over the version the primary holds.
    s3.set(KEY, { ...leader(), switchover: REQUEST });
    t += 10_000;
    await one.look();
    // Its renewal lost the race, re-read the record and renewed with the request on it.
    expect(leader()).toMatchObject({ primary: 'node-1', epoch: 1, renewals: 2, switchover: REQUEST });
    expect(one.agent.active).toBe(true);
    expect(one.agent.delayMs()).toBe(625);
    for (let i = 0; i < 3; i++) {
      t += 625;
      await two.look();
      await one.look();
    }
    expect(two.agent.active).toBe(true);
    expect(one.role()).toMatchObject({ role: 'primary', draining: true });
    // Not handed over before the worker says it drained.
    expect(leader().epoch).toBe(1);
    await one.drained(1);
    t += 625;
    await two.look();
    await one.look();
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2, handover: 'immediate', previous: 'node-1' });
    expect(leader().switchover).toBeUndefined();
    expect(one.role().role).toBe('fenced');
    expect(one.role().draining).toBeUndefined();
    t += 625;
    await two.look();
    expect(two.role().role).toBe('primary');
  });

  it('drops a request whose target is cordoned, and never drains', async () => {
    const one = node('node-1');
    await one.look();
    const note = { at: 1, by: 'ops', reason: null };
    s3.set('peer-sync/watchdog/state.json', {
      ...emptyWatchdogState(),
      maintenance: { paused: null, cordoned: { 'node-2': note } },
    });
    s3.set(KEY, { ...leader(), switchover: REQUEST });
    t += 10_000;
    await one.look();
    for (let i = 0; i < 5; i++) {
      t += 625;
      await one.look();
      expect(one.role().draining).toBeUndefined();
    }
    // The renewal after the drop removes the request; the primary carries on.
    t += 10_000;
    await one.look();
    expect(leader()).toMatchObject({ primary: 'node-1', epoch: 1 });
    expect(leader().switchover).toBeUndefined();
    expect(one.role().role).toBe('primary');
    expect(one.agent.active).toBe(false);
  });

  it('stays drained when its handover write fails, and tries it again: it never consumes meanwhile', async () => {
    const one = node('node-1');
    await one.look();
    s3.set(KEY, { ...leader(), switchover: REQUEST });
    t += 10_000;
    await one.look();
    t += 625;
    await one.look();
    expect(one.role()).toMatchObject({ role: 'primary', draining: true });
    await one.drained(1);
    s3.failNext(serverError());
    t += 625;
    await one.look();
    expect(leader().epoch).toBe(1);
    expect(one.role()).toMatchObject({ role: 'primary', draining: true });
    t += 625;
    await one.look();
    expect(leader()).toMatchObject({ primary: 'node-2', epoch: 2, handover: 'immediate' });
    expect(one.role().role).toBe('fenced');
  });

  it('stops draining and carries on when the request is withdrawn', async () => {
    const [one, two] = [node('node-1'), node('node-2')];
    await one.look();
    await two.look();
    s3.set(KEY, { ...leader(), switchover: REQUEST });
    t += 10_000;
    await one.look();
    for (let i = 0; i < 3; i++) {
      t += 625;
      await two.look();
      await one.look();
    }
    expect(one.role().draining).toBe(true);
    const withdrawn = leader();
    delete withdrawn.switchover;
    s3.set(KEY, withdrawn);
    t += 10_000;
    await one.look();
    expect(one.role()).toMatchObject({ role: 'primary' });
    expect(one.role().draining).toBeUndefined();
    expect(leader()).toMatchObject({ primary: 'node-1', epoch: 1 });
  });
});
