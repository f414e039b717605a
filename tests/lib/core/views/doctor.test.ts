import { buildConfig } from '../../../../lib/core/config';
import { doctorChecks, doctorPassed } from '../../../../lib/core/views/doctor';
import { deadLetterUrl, type DoctorFacts } from '../../../../lib/core/views/doctor-checks';
import type { HeartbeatObservation } from '../../../../lib/core/views/observed';
import { heartbeat, sample } from '../../../helpers/fixtures';

const NOW = 1_800_000_000_000;
const NODES = [
  { name: 'node-1', instanceId: 'mi-00000000000000001', lightsailName: 'fleet-1', priority: 1, address: '192.0.2.1' },
  { name: 'node-2', instanceId: 'mi-00000000000000002', lightsailName: 'fleet-2', priority: 2, address: '192.0.2.2' },
];
const config = buildConfig(
  {},
  {
    nodes: NODES,
    queueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/tasks',
    topicArn: 'arn:aws:sns:us-west-2:123456789012:fleet-events',
    hostedZoneId: 'ZTEST',
    recordName: 'origin.example.com',
  },
);
/**
 * Past the keep-alive and two sample intervals: stale even for
 * the lease holder (whose heartbeat is rewritten only with news).
 */
const STALE_MS = (config.heartbeatKeepAliveSeconds + 2 * config.sampleIntervalSeconds) * 1000 + 1000;
const beat = (node: string, over = {}): HeartbeatObservation => ({
  heartbeat: { state: 'ok', value: heartbeat(node, [sample(0, over)]) },
  writtenAt: NOW - 4000,
});
const healthy = (): DoctorFacts => ({
  config,
  bucket: { state: 'ok' },
  table: { state: 'ok' },
  leader: {
    state: 'ok',
    value: {
      version: 1,
      primary: 'node-1',
      epoch: 1,
      renewals: 3,
      reason: 't',
      changedBy: 't',
      previous: null,
      handover: 'immediate',
    },
  },
  heartbeats: new Map([
    ['node-1', beat('node-1')],
    ['node-2', beat('node-2')],
  ]),
  queue: { state: 'ok', visible: 2, inFlight: 1 },
  deadLetter: { state: 'ok', name: 'tasks-dlq', visible: 0, inFlight: 0 },
  instances: new Map([
    ['node-1', { instance: 'running', ssm: 'online' }],
    ['node-2', { instance: 'running', ssm: 'online' }],
  ]),
  origin: { state: 'ok', value: '192.0.2.1' },
  now: NOW,
});
const byName = (facts: DoctorFacts, name: string) => doctorChecks(facts).find((c) => c.name === name);

describe('doctorChecks', () => {
  it(
    "gives the lease holder's heartbeat its keep-alive (it is rewritten " +
      "only with news), also when the lease cannot be read, and no other node's",
    () => {
      const quiet = (node: string): HeartbeatObservation => ({ ...beat(node), writtenAt: NOW - 200_000 });
      expect(
        byName(
          {
            ...healthy(),
            heartbeats: new Map([
              ['node-1', quiet('node-1')],
              ['node-2', beat('node-2')],
            ]),
          },
          'heartbeat node-1',
        )?.status,
      ).toBe('ok');
      expect(
        byName(
          {
            ...healthy(),
            table: { state: 'error', error: 'UnreachableError' },
            leader: null,
            heartbeats: new Map([
              ['node-1', quiet('node-1')],
              ['node-2', beat('node-2')],
            ]),
          },
          'heartbeat node-1',
        )?.status,
      ).toBe('ok');
      // node-2's heartbeat says primary, but the lease names node-1: an old primary's last word goes stale as any.
      const oldPrimary: HeartbeatObservation = {
        heartbeat: { state: 'ok', value: { ...heartbeat('node-2', [sample(0)]), role: 'primary' } },
        writtenAt: NOW - 200_000,
      };
      expect(
        byName(
          {
            ...healthy(),
            heartbeats: new Map([
              ['node-1', beat('node-1')],
              ['node-2', oldPrimary],
            ]),
          },
          'heartbeat node-2',
        )?.status,
      ).toBe('fail');
    },
  );

  it('passes a healthy fleet, every check ok and without a hint', () => {
    const checks = doctorChecks(healthy());
    expect(checks.map((c) => c.name)).toEqual([
      'config',
      'bucket',
      'table',
      'leader.json',
      'heartbeat node-1',
      'heartbeat node-2',
      'queue',
      'dead-letter queue',
      'topic',
      'ssm node-1',
      'ssm node-2',
      'origin record',
    ]);
    expect(checks.filter((c) => c.status !== 'ok' || c.hint !== null)).toEqual([]);
    expect(doctorPassed(checks)).toBe(true);
  });

  it.each([
    [
      'a missing heartbeat',
      { heartbeats: new Map([['node-1', beat('node-1')]]) },
      'heartbeat node-2',
      'fail',
      /install and start the agent on node-2/,
    ],
    [
      'a stale heartbeat',
      {
        heartbeats: new Map([
          ['node-1', beat('node-1')],
          ['node-2', { ...beat('node-2'), writtenAt: NOW - STALE_MS }],
        ]),
      },
      'heartbeat node-2',
      'fail',
      /systemctl status queen-fleet-peer-sync/,
    ],
    [
      "the lease holder's heartbeat older than its keep-alive",
      {
        heartbeats: new Map([
          ['node-1', { ...beat('node-1'), writtenAt: NOW - STALE_MS }],
          ['node-2', beat('node-2')],
        ]),
      },
      'heartbeat node-1',
      'fail',
      /systemctl status queen-fleet-peer-sync/,
    ],
    [
      'a standby without worker',
      {
        heartbeats: new Map([
          ['node-1', beat('node-1')],
          ['node-2', beat('node-2', { workerProcesses: 0 })],
        ]),
      },
      'heartbeat node-2',
      'warn',
      /systemctl start queen-fleet-worker/,
    ],
    [
      'a lost SSM agent',
      { instances: new Map([['node-2', { instance: 'running', ssm: 'lost' }]]) },
      'ssm node-2',
      'fail',
      /restart amazon-ssm-agent/,
    ],
    ['an unregistered node', { instances: new Map() }, 'ssm node-1', 'fail', /fleet enroll node-1/],
    [
      'a record at the old primary',
      { origin: { state: 'ok', value: '192.0.2.2' } },
      'origin record',
      'fail',
      /UPSERT origin.example.com to 192.0.2.1/,
    ],
    ['no record', { origin: { state: 'ok', value: null } }, 'origin record', 'fail', /create it pointing at 192.0.2.1/],
    [
      'messages in the dead-letter queue',
      { deadLetter: { state: 'ok', name: 'tasks-dlq', visible: 2, inFlight: 0 } },
      'dead-letter queue',
      'warn',
      /POISON_TASK/,
    ],
    ['a missing leader.json', { leader: { state: 'missing' } }, 'leader.json', 'fail', /first ready node creates it/],
    [
      'a leader outside the configuration',
      {
        leader: {
          state: 'ok',
          value: {
            version: 1,
            primary: 'node-7',
            epoch: 2,
            renewals: 0,
            reason: '',
            changedBy: '',
            previous: null,
            handover: 'immediate',
          },
        },
      },
      'leader.json',
      'fail',
      /add node-7/,
    ],
  ] as const)('reports %s with a hint', (_, over, name, status, hint) => {
    const found = byName({ ...healthy(), ...over } as DoctorFacts, name);
    expect(found?.status).toBe(status);
    expect(found?.hint).toMatch(hint);
  });

  it('reports what it could not check when the bucket is unreachable, and fails', () => {
    const checks = doctorChecks({
      ...healthy(),
      bucket: { state: 'error', error: 'UnreachableError: connect ECONNREFUSED' },
      table: null,
      leader: null,
      heartbeats: null,
    });
    expect(checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual([
      'bucket',
      'table',
      'leader.json',
      'heartbeat node-1',
      'heartbeat node-2',
    ]);
    expect(doctorPassed(checks)).toBe(false);
  });

  it('blames the table, not the bucket, when only the lease cannot be read', () => {
    const checks = doctorChecks({
      ...healthy(),
      table: { state: 'error', error: 'FleetError: ResourceNotFoundException: Requested resource not found' },
      leader: null,
    });
    expect(checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual(['table', 'leader.json']);
    expect(byName({ ...healthy(), table: { state: 'error', error: 'x' }, leader: null }, 'table')?.hint).toMatch(
      /FLEET_TABLE .*dynamodb:GetItem/,
    );
    expect(
      byName({ ...healthy(), table: { state: 'error', error: 'x' }, leader: null }, 'leader.json')?.detail,
    ).toMatch(/table is unreachable/);
  });

  it('warns, but passes, without queue or topic configured', () => {
    const bare = buildConfig({}, { nodes: NODES });
    const checks = doctorChecks({
      ...healthy(),
      config: bare,
      queue: { state: 'not-configured' },
      deadLetter: null,
      origin: { state: 'not-configured' },
    });
    expect(checks.filter((c) => c.status === 'warn').map((c) => c.name)).toEqual(['queue', 'topic']);
    expect(doctorPassed(checks)).toBe(true);
  });
});

describe('deadLetterUrl', () => {
  it('swaps the queue name for the one in the ARN (same account and region, as SQS requires)', () => {
    expect(
      deadLetterUrl(
        'https://sqs.us-west-2.amazonaws.com/123456789012/tasks',
        'arn:aws:sqs:us-west-2:123456789012:tasks-dlq',
      ),
    ).toBe('https://sqs.us-west-2.amazonaws.com/123456789012/tasks-dlq');
  });
});
