import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OriginRecord } from '../../lib/aws/dns';
import { ClientFactory } from '../../lib/aws/clients';
import { TaskQueue } from '../../lib/aws/queue';
import type { StateStore } from '../../lib/aws/state-store';
import { stateStoreFor } from '../../lib/aws/stores';
import { configSchema } from '../../lib/core/config';
import type { FleetEvent } from '../../lib/core/events';
import { eventKey } from '../../lib/core/events';
import { KEYS } from '../../lib/core/keys';
import type { Heartbeat, Leader, Sample } from '../../lib/core/schemas';
import { emptyCounter } from '../../lib/core/fleet/stall';
import { makeEvent } from '../../lib/core/fleet/watchdog-events';
import type { WatchdogState } from '../../lib/core/fleet/watchdog-state';
import { announceLocal } from '../../lib/ops/target';
import type { LocalCloudInfo } from './children';
import { heartbeat, sample } from './fixtures';

/** Five nodes, one per situation `fleet status` must show. */
export const OPERATOR_NODES = [1, 2, 3, 4, 5].map((i) => ({
  name: `node-${i}`,
  instanceId: `mi-0000000000000000${i}`,
  lightsailName: `fleet-node-${i}`,
  priority: i,
  address: `192.0.2.${i}`,
}));
export const ZONE = { id: 'ZOPERATORTEST', record: 'origin.operator.test' } as const;
export const INCIDENT = 'node-1-e1-i1';

/** A local cloud with a fleet config and a discovery file, as `fleet drill --hold` leaves them. */
export interface OperatorFleet {
  configFile: string;
  localFile: string;
  store: StateStore;
  queue: TaskQueue;
  dns: OriginRecord;
}

/** Writes the config and discovery files for `cloud` into `dir` and opens adapters on it. */
export const operatorFleet = (cloud: LocalCloudInfo, dir: string): OperatorFleet => {
  const configFile = join(dir, 'config.json');
  const localFile = join(dir, 'local.json');
  const config = {
    region: cloud.region,
    bucket: cloud.bucket,
    table: cloud.table,
    queueUrl: cloud.queueUrl,
    intakeQueueUrl: cloud.intakeUrl,
    notifierFailureQueueUrl: cloud.notifierFailuresUrl,
    topicArn: cloud.topicArn,
    nodes: OPERATOR_NODES,
    hostedZoneId: ZONE.id,
    recordName: ZONE.record,
    commandWaitSeconds: 2,
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const parsed = configSchema.parse(config);
  const pid = cloud.child.pid;
  if (pid === undefined) throw new Error('the local cloud process has no pid');
  announceLocal(
    {
      pid,
      endpoint: cloud.endpoint,
      region: cloud.region,
      configFile,
      scenario: 'operator-test',
      startedAt: Date.now(),
    },
    localFile,
  );
  const clients = new ClientFactory(
    {
      region: cloud.region,
      endpoint: cloud.endpoint,
      credentials: { accessKeyId: 'test-seed', secretAccessKey: 'local' },
    },
    {},
  );
  return {
    configFile,
    localFile,
    store: stateStoreFor(parsed, clients),
    queue: new TaskQueue(clients.sqs(), cloud.queueUrl),
    dns: new OriginRecord(clients.route53(), { hostedZoneId: ZONE.id, recordName: ZONE.record, type: 'A', ttl: 60 }),
  };
};

/** Four samples ending now (by this machine's clock), the newest last. */
const recent = (now: number, over: Partial<Sample> = {}): Sample[] =>
  [0, 1, 2, 3].map((i) => sample(i, { at: now - (3 - i) * 15_000, ...over }));

const leaderAt1: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 1,
  renewals: 12,
  reason: 'drill bootstrap',
  changedBy: 'drill',
  previous: null,
  handover: 'immediate',
};

const watchdogState = (now: number): WatchdogState => {
  const quiet = {
    counter: emptyCounter(),
    incident: null,
    restartTimes: [],
    rejoinTimes: [],
    incidents: 0,
    newest: null,
  };
  return {
    version: 2,
    revision: 7,
    lastFailoverAt: null,
    judgedAt: null,
    nodes: {
      'node-1': {
        counter: { ...emptyCounter(), boot: 'boot-1', lastSeq: 3, failing: 8, healthy: 0, lastFault: 'no-progress' },
        incident: {
          id: INCIDENT,
          kind: 'stall',
          openedAt: now - 60_000,
          epoch: 1,
          stage: { name: 'restart-sent' },
          restart: { command: 'restartWorker', claimedAt: now - 58_000, commandId: 'cmd-1', sentAt: now - 57_000 },
        },
        restartTimes: [now - 58_000],
        rejoinTimes: [],
        incidents: 1,
        newest: null,
      },
      'node-2': { ...quiet, counter: { ...emptyCounter(), boot: 'boot-1', lastSeq: 3, healthy: 4 } },
      'node-3': quiet,
    },
  };
};

/** The stored history: an old standby alert, then the primary's stall and its restart (newest). */
export const seededEvents = (now: number): FleetEvent[] => [
  makeEvent(
    'REDUNDANCY_LOST',
    'node-2',
    { id: 'node-2-e1-i1', epoch: 1 },
    emptyCounter(),
    now - 3 * 3_600_000,
    'node-2: standby lost (instance stopped).',
  ),
  makeEvent(
    'STALLED',
    'node-1',
    { id: INCIDENT, epoch: 1 },
    emptyCounter(),
    now - 60_000,
    'node-1: stalled (no progress for 8 samples).',
  ),
  makeEvent(
    'RESTART_SENT',
    'node-1',
    { id: INCIDENT, epoch: 1 },
    emptyCounter(),
    now - 57_000,
    'node-1: restart sent (cmd-1).',
    { commandId: 'cmd-1' },
  ),
];

/**
 * The fleet's state at epoch 1: node-1 primary with an open stall incident, node-2 a ready
 * standby, node-3 a standby without a worker, node-4 silent (no heartbeat), node-5 corrupt.
 * Written fresh each time, since readiness judges heartbeats by their Last-Modified time.
 */
export const seedFleet = async (f: OperatorFleet, now = Date.now()): Promise<void> => {
  const beats: Heartbeat[] = [
    { ...heartbeat('node-1', recent(now)), role: 'primary' },
    { ...heartbeat('node-2', recent(now, { consumingEpoch: null })), role: 'standby' },
    { ...heartbeat('node-3', recent(now, { workerProcesses: 0, consumingEpoch: null })), role: 'standby' },
  ];
  await f.store.put(KEYS.leader, leaderAt1);
  await Promise.all(beats.map((hb) => f.store.put(KEYS.heartbeat(hb.node), hb)));
  await f.store.put(KEYS.heartbeat('node-5'), { version: 1, node: 'node-5', samples: 'garbled' });
  await f.store.put(KEYS.watchdogState, watchdogState(now));
  await f.dns.upsert('192.0.2.1');
};

/** Writes the events oldest first (so S3's Last-Modified order is theirs) and two queued tasks. */
export const seedHistory = async (f: OperatorFleet, now = Date.now()): Promise<void> => {
  for (const e of seededEvents(now)) await f.store.put(eventKey(e), e);
  await f.queue.send(JSON.stringify({ taskId: 'task-0001', workSeconds: 90 }));
  await f.queue.send(JSON.stringify({ taskId: 'task-0002', workSeconds: 90 }));
};
