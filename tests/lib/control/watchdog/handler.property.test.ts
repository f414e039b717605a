import fc from 'fast-check';
import type { Config } from '../../../../lib/core/config';
import { createWatchdogHandler } from '../../../../lib/control/watchdog/handler';
import type { WatchdogDeps } from '../../../../lib/control/watchdog/deps';
import { memoryLogger } from '../../../helpers/memory-logger';
import { expectNoPollution, hostileStringArb, hostileValueArb, POLLUTERS, RUNS } from '../../../helpers/hostile';

/**
 * Hostile input: the envelope the watchdog is invoked with (an S3 notification, the schedule,
 * an agent's invoke, or anything else) is only read to log and to skip keys of unknown nodes. A
 * hostile one is either ignored or leads to an ordinary run; it never throws on its own.
 */
class ReachedRun extends Error {}

/** Deps whose only use is to say that the handler went on to a watchdog run. */
const depsReachingRun = (): WatchdogDeps => {
  const config = { prefix: 'peer-sync/', nodes: [{ name: 'node-1' }, { name: 'node-2' }] } as unknown as Config;
  const base = { config, log: memoryLogger().log };
  return new Proxy(base, {
    get: (target, name) => {
      if (name in target) return target[name as keyof typeof target];
      throw new ReachedRun(String(name));
    },
  }) as unknown as WatchdogDeps;
};

/** Keys as S3 sends them (URL-encoded, `+` for a space) and as a hostile test event might: broken escapes. */
const keyArb = fc.oneof(
  hostileStringArb,
  fc.constantFrom(
    '%',
    '%E0%A4%A',
    '%ff',
    '%uD800',
    'peer-sync/nodes/node-1/heartbeat.json',
    'peer-sync%2Fnodes%2Fnode-1%2Fheartbeat.json',
    'peer-sync/nodes/node-9/heartbeat.json%',
  ),
  hostileStringArb.map((s) => `peer-sync/nodes/${s}/heartbeat.json`),
);

const eventArb = fc.oneof(
  fc
    .array(keyArb, { minLength: 1, maxLength: 3 })
    .map((keys) => ({ Records: keys.map((key) => ({ eventName: 'ObjectCreated:Put', s3: { object: { key } } })) })),
  fc.constant({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} }),
  fc.constantFrom(...POLLUTERS),
  hostileValueArb,
);

describe('watchdog handler, over hostile invocation events', () => {
  afterEach(expectNoPollution);

  it('ignores the event or goes on to a run, and never throws on the envelope itself', async () => {
    await fc.assert(
      fc.asyncProperty(eventArb, async (event) => {
        const handler = createWatchdogHandler(depsReachingRun());
        // Anything but an ignored event or a run (a URIError, a TypeError) fails the case here.
        const outcome = await handler(event).then(
          (run) => (run.heartbeats === 0 && run.actions.length === 0 ? 'ignored' : 'judged'),
          (error: unknown) => {
            if (error instanceof ReachedRun) return 'ran';
            throw error;
          },
        );
        expect(['ignored', 'ran']).toContain(outcome);
        expectNoPollution();
      }),
      { numRuns: RUNS },
    );
  });

  it('ignores a notification whose key is not a valid URL encoding, as a key of no known node', async () => {
    const run = await createWatchdogHandler(depsReachingRun())({
      Records: [{ s3: { object: { key: 'peer-sync/nodes/node-1%/heartbeat.json' } } }],
    });
    expect(run).toMatchObject({ heartbeats: 0, rejected: ['peer-sync/nodes/node-1%/heartbeat.json'] });
  });
});
