import { S3Client } from '@aws-sdk/client-s3';
import { judgeAlive } from '../../../helpers/judge';
import { findRestart } from '../../../../lib/control/watchdog/actions';
import type { WatchdogDeps } from '../../../../lib/control/watchdog/deps';
import { StateStore } from '../../../../lib/aws/state-store';
import { buildConfig } from '../../../../lib/core/config';
import type { FleetEvent } from '../../../../lib/core/events';
import { emptyWatchdogState, type WatchdogState } from '../../../../lib/core/fleet/watchdog-state';
import { frozen, heartbeat, NODES, leaderOf, watchdogSettings } from '../../../helpers/fixtures';
import { memoryLogger } from '../../../helpers/memory-logger';
import { MemoryS3 } from '../../../helpers/memory-s3';

const T0 = 1_800_000_000_000;
const settings = watchdogSettings(NODES);
const leader = leaderOf();

/** A watchdog whose run claimed a restart of node-1's worker and died before sending it. */
describe('findRestart: a restart claimed and never sent', () => {
  let s3: MemoryS3;
  const sent: string[] = [];
  const published: FleetEvent[] = [];
  const deps = (found: string | null): WatchdogDeps =>
    ({
      config: buildConfig({}, { nodes: NODES }),
      store: new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      }),
      alerts: { publish: (e: FleetEvent) => Promise.resolve(published.push(e)) },
      commands: {
        send: (target: { instanceId?: string }, command: string) => (
          sent.push(`${target.instanceId} ${command}`),
          Promise.resolve('cmd-2')
        ),
        findSent: () => Promise.resolve(found),
      },
      log: memoryLogger().log,
      now: () => T0 + 61_000,
    }) as unknown as WatchdogDeps;

  beforeEach(() => {
    s3 = new MemoryS3();
    sent.length = 0;
    published.length = 0;
    const claimed: WatchdogState = judgeAlive(
      emptyWatchdogState(),
      leader,
      new Map([['node-1', heartbeat('node-1', frozen(0, 9))]]),
      T0,
      settings,
    ).state;
    s3.set('peer-sync/watchdog/state.json', claimed);
  });
  afterAll(() => s3.restore());

  const stage = (): unknown =>
    (s3.json('peer-sync/watchdog/state.json') as WatchdogState).nodes['node-1']?.incident?.stage.name;
  const action = {
    kind: 'find-restart',
    node: 'node-1',
    instanceId: 'mi-00000000000000001',
    incidentId: 'node-1-e1-i1',
    command: 'restartWorker',
  } as const;

  it('sends it now when SSM never saw it, and records it as sent: no RESTART_FAILED, no escalation', async () => {
    await findRestart(deps(null), action);
    expect(sent).toEqual(['mi-00000000000000001 restartWorker']);
    expect(stage()).toBe('restart-sent');
    expect(published.map((e) => e.kind)).toEqual(['RESTART_SENT']);
  });

  it('records the one SSM did see as sent, and sends nothing again', async () => {
    await findRestart(deps('cmd-1'), action);
    expect(sent).toEqual([]);
    expect(stage()).toBe('restart-sent');
  });
});
