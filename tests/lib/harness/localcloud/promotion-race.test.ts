import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import pino from 'pino';
import { LeaseKeeper } from '../../../../agent/lease-keeper';
import { StateStore } from '../../../../lib/aws/state-store';
import { buildConfig } from '../../../../lib/core/config';
import { KEYS } from '../../../../lib/core/keys';
import { nextEpoch } from '../../../../lib/core/fleet/lease';
import { leaderSchema } from '../../../../lib/core/schemas';
import { promoteGuarded } from '../../../../lib/control/watchdog/failover';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../../../helpers/children';

const NODES = [1, 2, 3].map((i) => ({ name: `node-${i}`, instanceId: `mi-0000000000000000${i}`, priority: i }));

describe('promotion race on the local cloud', () => {
  let cloud: LocalCloudInfo;
  const store = (): StateStore =>
    new StateStore(
      new S3Client({
        region: cloud.region,
        endpoint: cloud.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      }),
      {
        bucket: cloud.bucket,
        prefix: 'race/',
        maxObjectBytes: 1 << 20,
      },
    );

  beforeAll(async () => {
    cloud = await startCloudProcess();
  });
  afterAll(() => killAll());

  it('lets exactly one of 5 concurrent promoters (3 watchdog copies, 2 standbys) win', async () => {
    await store().create(KEYS.leader, nextEpoch(null, 'node-1', 'bootstrap', 'test', 'immediate'));
    let clock = 1_000_000;
    const keeper = (name: string): LeaseKeeper =>
      new LeaseKeeper({
        config: {
          ...buildConfig({}, { nodes: NODES }),
          nodeName: name,
          dataDir: mkdtempSync(join(tmpdir(), `qf-race-${name}-`)),
        },
        store: store(),
        log: pino({ level: 'silent' }),
        ready: () => true,
        clock: () => clock,
      });
    const standbys = [keeper('node-2'), keeper('node-3')];
    // Each standby sees the record once, then nothing changes for longer than any expiry.
    await Promise.all(standbys.map((k) => k.round()));
    clock += 600_000;
    const results = await Promise.all([
      ...['node-2', 'node-3', 'node-2'].map((to) =>
        promoteGuarded(store(), { from: 'node-1', to, fromEpoch: 1, reason: 'race', outgoingStopped: false }).then(
          (r) => r.detail === 'promoted',
        ),
      ),
      ...standbys.map((k) => k.round().then((role) => role.role === 'primary')),
    ]);
    const leader = await store().read(KEYS.leader, leaderSchema);
    expect(leader?.value.epoch).toBe(2);
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
