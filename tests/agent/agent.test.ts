import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { Agent } from '../../agent/agent';
import { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { memoryLogger } from '../helpers/memory-logger';
import { MemoryS3 } from '../helpers/memory-s3';

describe('Agent', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.mock.restore());

  it('renews its lease on its own loop while a peer-sync round hangs, so a slow manifest never demotes the primary', async () => {
    const config = {
      ...buildConfig({}, {
        nodes: [{ name: 'node-1', instanceId: 'mi-00000000000000001' }, { name: 'node-2', instanceId: 'mi-00000000000000002' }],
        sampleIntervalSeconds: 0.05,
        syncIntervalSeconds: 0.1,
        completionWindowSeconds: 1,
        leaseRenewSeconds: 0.1,
        leaseExpirySeconds: 0.3,
        healthPort: 0,
      }),
      nodeName: 'node-1',
      dataDir: mkdtempSync(join(tmpdir(), 'qf-agent-')),
    };
    s3.set('peer-sync/leader.json', { version: 1, primary: 'node-1', epoch: 1, renewals: 0, reason: 't', changedBy: 't', previous: null, handover: 'immediate' });
    // Every manifest read hangs: each peer-sync round blocks on its first request.
    const release = s3.stallReads((k) => k.startsWith('peer-sync/manifest'));
    const store = new StateStore(new S3Client({ region: 'us-west-2' }), { bucket: 'b', prefix: 'peer-sync/', maxObjectBytes: 1 << 20 });
    const agent = new Agent({ config, store, queue: null, log: memoryLogger().log, now: Date.now, alerts: null, trigger: null });
    await agent.start();
    await new Promise((r) => setTimeout(r, 1_000));
    const renewals = s3.puts.filter((p) => p.key === 'peer-sync/leader.json').length;
    release();
    await agent.close();
    expect(renewals).toBeGreaterThanOrEqual(6);
    expect((s3.json('peer-sync/leader.json') as { renewals: number }).renewals).toBeGreaterThanOrEqual(6);
  });
});
