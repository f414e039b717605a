import type { Config, NodeSpec } from '../config';
import type { Confirmation } from '../fleet/liveness';
import type { HeartbeatObservation, Observed } from './observed';
import { freshForMs, isFresh } from './readiness';
import type { Leader } from '../schemas';
import type { QueueObservation } from './status';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `fleet doctor`: what was checked, the verdict, and how to fix it. */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** One line on how to fix it; null when there is nothing to do. */
  hint: string | null;
}

export type DeadLetterObservation =
  | { state: 'none' }
  | { state: 'ok'; name: string; visible: number; inFlight: number }
  | { state: 'error'; error: string };
export type OriginObservation =
  { state: 'not-configured' } | { state: 'ok'; value: string | null } | { state: 'error'; error: string };

/** What `lib/ops/doctor.ts` gathered; `leader` and `heartbeats` are null when the bucket was unreachable. */
export interface DoctorFacts {
  config: Config;
  bucket: { state: 'ok' } | { state: 'error'; error: string };
  /** The control table, by reading the lease from it; null when not looked at (the bucket failed first). */
  table: { state: 'ok' } | { state: 'error'; error: string } | null;
  /** Null when it could not be read: the bucket or the table failed. */
  leader: Observed<Leader> | null;
  heartbeats: ReadonlyMap<string, HeartbeatObservation> | null;
  queue: QueueObservation;
  /** Null when the queue itself could not be read. */
  deadLetter: DeadLetterObservation | null;
  instances: ReadonlyMap<string, Confirmation>;
  origin: OriginObservation;
  now: number;
}

const check = (name: string, status: CheckStatus, detail: string, hint: string | null = null): Check => ({
  name,
  status,
  detail,
  hint,
});
const INSTALL = 'docs/install.md';

/** The check reported when the configuration cannot be loaded at all. */
export const configFailure = (error: string): Check =>
  check(
    'config',
    'fail',
    error,
    'fix the named key in the file FLEET_CONFIG_FILE names, or its FLEET_* variable (every key: lib/core/config.ts; the file: docs/install.md step 4)',
  );

const configCheck = (c: Config): Check => {
  const names = c.nodes.map((n) => `${n.name} (${n.instanceId})`).join(', ');
  if (c.nodes.length === 0)
    return check(
      'config',
      'fail',
      `valid, but no nodes (bucket ${c.bucket}, region ${c.region})`,
      `list the nodes in "nodes" (FLEET_NODES): ${INSTALL} step 4`,
    );
  if (c.nodes.length === 1)
    return check(
      'config',
      'warn',
      `valid, one node: ${names}; no standby to fail over to`,
      `install a standby node: ${INSTALL} steps 2-7`,
    );
  return check('config', 'ok', `valid: bucket ${c.bucket} in ${c.region}, ${c.nodes.length} nodes: ${names}`);
};

const NOT_CHECKED = 'not checked: the bucket is unreachable';

const tableCheck = (facts: DoctorFacts): Check => {
  const { config, table } = facts;
  if (table === null) return check('table', 'fail', NOT_CHECKED, 'fix the bucket first');
  if (table.state === 'error') {
    return check(
      'table',
      'fail',
      `${config.table}: ${table.error}`,
      "check FLEET_TABLE (the stack's ControlTableName output) and FLEET_REGION, and that these credentials may call dynamodb:GetItem on it",
    );
  }
  return check('table', 'ok', `${config.table} reachable (it holds the lease)`);
};

const leaderCheck = (facts: DoctorFacts): Check => {
  const { leader } = facts;
  const nodes = facts.config.nodes;
  if (leader === null)
    return check(
      'leader.json',
      'fail',
      facts.table?.state === 'error' ? 'not checked: the table is unreachable' : NOT_CHECKED,
      facts.table?.state === 'error' ? 'fix the table first' : 'fix the bucket first',
    );
  if (leader.state === 'missing')
    return check(
      'leader.json',
      'fail',
      'missing: the fleet has no primary',
      `install and start the agents (${INSTALL} step 6): the first ready node creates it`,
    );
  if (leader.state === 'corrupt')
    return check(
      'leader.json',
      'fail',
      `corrupt: ${leader.error}`,
      'the role cannot move until it is valid: compare it with the schema in lib/core/schemas.ts and repair it with one node as primary',
    );
  const l = leader.value;
  if (!nodes.some((n) => n.name === l.primary)) {
    return check(
      'leader.json',
      'fail',
      `names ${l.primary} (epoch ${l.epoch}), which the configuration does not list`,
      `add ${l.primary} to the configuration, or move the role: fleet failover --to <node> --reason … --force`,
    );
  }
  return check('leader.json', 'ok', `${l.primary} is primary of epoch ${l.epoch} (handover ${l.handover})`);
};

const heartbeatCheck = (spec: NodeSpec, facts: DoctorFacts): Check => {
  const name = `heartbeat ${spec.name}`;
  if (facts.heartbeats === null) return check(name, 'fail', NOT_CHECKED, 'fix the bucket first');
  const obs = facts.heartbeats.get(spec.name);
  const hb = obs?.heartbeat ?? { state: 'missing' as const };
  if (hb.state === 'missing')
    return check(
      name,
      'fail',
      'missing',
      `install and start the agent on ${spec.name}: ${INSTALL} steps 5-7 (install.sh --node ${spec.name})`,
    );
  if (hb.state === 'corrupt')
    return check(
      name,
      'fail',
      `corrupt: ${hb.error}`,
      `upgrade the agent on ${spec.name} to this version (${INSTALL}, Operations: Upgrade); it rewrites the object (with news, or every heartbeatKeepAliveSeconds)`,
    );
  const record = facts.leader?.state === 'ok' ? facts.leader.value : null;
  const timing = {
    sampleMs: facts.config.sampleIntervalSeconds * 1000,
    keepAliveMs: facts.config.heartbeatKeepAliveSeconds * 1000,
    holder: record?.primary ?? null,
  };
  const ago =
    obs?.writtenAt === null || obs?.writtenAt === undefined
      ? 'at an unknown time'
      : `${Math.round((facts.now - obs.writtenAt) / 1000)} s ago`;
  if (!isFresh(obs, facts.now, timing)) {
    return check(
      name,
      'fail',
      `stale: written ${ago} (fresh is under ${Math.round(freshForMs(hb.value, timing) / 1000)} s)`,
      `on ${spec.name}: sudo systemctl status queen-fleet-peer-sync; journalctl -u queen-fleet-peer-sync (${INSTALL} step 7, Troubleshooting)`,
    );
  }
  const last = hb.value.samples.at(-1);
  const detail = `${hb.value.role}, written ${ago}, epoch ${last?.epochSeen ?? '?'}, ${last?.workerProcesses ?? 0} worker process(es)`;
  if (last !== undefined && last.workerProcesses === 0) {
    return check(
      name,
      'warn',
      `${detail}: no worker`,
      `on ${spec.name}: sudo systemctl start queen-fleet-worker (a failover leaves the old primary's worker stopped; a standby needs it running to be ready)`,
    );
  }
  const leader = facts.leader?.state === 'ok' ? facts.leader.value : null;
  if (leader !== null && last !== undefined && last.epochSeen !== leader.epoch) {
    return check(
      name,
      'warn',
      `${detail}: behind epoch ${leader.epoch}`,
      `if it lasts, check the agent on ${spec.name} can read the bucket (journalctl -u queen-fleet-peer-sync)`,
    );
  }
  return check(name, 'ok', detail);
};

const queueChecks = (facts: DoctorFacts): Check[] => {
  const q = facts.queue;
  if (q.state === 'not-configured')
    return [
      check(
        'queue',
        'warn',
        'queueUrl is not configured here',
        'set FLEET_QUEUE_URL (queueUrl) to check the task queue and its backlog',
      ),
    ];
  if (q.state === 'error')
    return [
      check(
        'queue',
        'fail',
        `unreachable: ${q.error}`,
        'check FLEET_QUEUE_URL and that these credentials may call sqs:GetQueueAttributes',
      ),
    ];
  const out = [check('queue', 'ok', `${q.visible} visible, ${q.inFlight} in flight`)];
  const dl = facts.deadLetter;
  if (dl === null) return out;
  if (dl.state === 'none')
    out.push(
      check(
        'dead-letter queue',
        'warn',
        'the queue has no redrive policy',
        'give it a dead-letter queue (serverless.yml RedrivePolicy): a poison task is otherwise retried forever',
      ),
    );
  else if (dl.state === 'error')
    out.push(
      check(
        'dead-letter queue',
        'warn',
        `unreadable: ${dl.error}`,
        'check that these credentials may call sqs:GetQueueAttributes on it',
      ),
    );
  else if (dl.visible + dl.inFlight > 0)
    out.push(
      check(
        'dead-letter queue',
        'warn',
        `${dl.name}: ${dl.visible + dl.inFlight} message(s)`,
        'poison tasks: inspect them, fix the cause, re-drive the valid ones (docs/runbook.md, POISON_TASK)',
      ),
    );
  else out.push(check('dead-letter queue', 'ok', `${dl.name}: empty`));
  return out;
};

const instanceCheck = (spec: NodeSpec, c: Confirmation | undefined): Check => {
  const name = `ssm ${spec.name}`;
  const lightsail =
    spec.lightsailName === undefined
      ? 'no lightsailName configured'
      : `Lightsail ${spec.lightsailName}: ${c?.instance ?? 'unknown'}`;
  if (c?.instance === 'stopped')
    return check(name, 'fail', `${lightsail}`, `start ${spec.lightsailName ?? spec.name} in the Lightsail console`);
  if (c?.ssm === 'online') return check(name, 'ok', `${spec.instanceId} online; ${lightsail}`);
  if (c?.ssm === 'lost') {
    return check(
      name,
      'fail',
      `${spec.instanceId}: connection lost; ${lightsail}`,
      `on ${spec.name}: sudo systemctl restart amazon-ssm-agent (or snap restart amazon-ssm-agent); the watchdog cannot restart or stop its worker without it`,
    );
  }
  return check(
    name,
    'fail',
    `${spec.instanceId} is not registered with SSM (or not visible to these credentials); ${lightsail}`,
    `register ${spec.name} with the fleet's hybrid activation (${INSTALL} steps 2-3) and put its mi- id in the config (step 4)`,
  );
};

const sameValue = (a: string, b: string): boolean =>
  a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');

const originCheck = (facts: DoctorFacts): Check => {
  const { config, origin } = facts;
  const name = 'origin record';
  if (origin.state === 'not-configured') return check(name, 'ok', 'not configured: failover moves no DNS record');
  const where = `${config.recordName ?? '?'} (${config.recordType})`;
  if (origin.state === 'error')
    return check(
      name,
      'fail',
      `${where}: ${origin.error}`,
      'check hostedZoneId and recordName, and that these credentials may call route53:ListResourceRecordSets',
    );
  const leader = facts.leader?.state === 'ok' ? facts.leader.value : null;
  const primary = config.nodes.find((n) => n.name === leader?.primary);
  if (leader === null || primary?.address === undefined)
    return check(
      name,
      'warn',
      `${where} → ${origin.value ?? 'missing'}; the primary's address is unknown`,
      'fix leader.json first',
    );
  if (origin.value === null)
    return check(
      name,
      'fail',
      `${where} does not exist`,
      `create it pointing at ${primary.address} (${primary.name}); failovers then move it`,
    );
  if (!sameValue(origin.value, primary.address)) {
    const holder = config.nodes.find((n) => n.address !== undefined && sameValue(n.address, origin.value ?? ''));
    return check(
      name,
      'fail',
      `${where} → ${origin.value}${holder === undefined ? '' : ` (${holder.name})`}, but the primary ${primary.name} has ${primary.address}`,
      `UPSERT ${config.recordName ?? 'the record'} to ${primary.address}, or repeat the failover`,
    );
  }
  return check(name, 'ok', `${where} → ${origin.value} (${primary.name}, the primary)`);
};

/** Every check, in the order a person fixes things: config, storage (bucket, table), role, nodes, queue, alerts, SSM, DNS. */
export const doctorChecks = (facts: DoctorFacts): Check[] => {
  const { config } = facts;
  return [
    configCheck(config),
    facts.bucket.state === 'ok'
      ? check('bucket', 'ok', `${config.bucket} reachable (prefix ${config.prefix || '(none)'})`)
      : check(
          'bucket',
          'fail',
          `${config.bucket}: ${facts.bucket.error}`,
          'check FLEET_BUCKET and FLEET_REGION, and that these credentials may call s3:ListBucket and s3:GetObject',
        ),
    tableCheck(facts),
    leaderCheck(facts),
    ...config.nodes.map((spec) => heartbeatCheck(spec, facts)),
    ...queueChecks(facts),
    config.topicArn === undefined
      ? check(
          'topic',
          'warn',
          'topicArn is not configured here',
          'set FLEET_TOPIC_ARN (topicArn): without it the watchdog sends no alert',
        )
      : check('topic', 'ok', config.topicArn),
    ...config.nodes.map((spec) => instanceCheck(spec, facts.instances.get(spec.name))),
    originCheck(facts),
  ];
};

/** Exit 0 when no check failed (warnings allowed), 1 otherwise. */
export const doctorPassed = (checks: readonly Check[]): boolean => !checks.some((c) => c.status === 'fail');

/**
 * The URL of a dead-letter queue from the source queue's URL and the DLQ's ARN: SQS requires
 * both in one account and region, so only the last path segment differs.
 */
export const deadLetterUrl = (queueUrl: string, arn: string): string | null => {
  const name = arn.split(':').at(-1);
  const cut = queueUrl.lastIndexOf('/');
  return name === undefined || name === '' || cut < 0 ? null : `${queueUrl.slice(0, cut + 1)}${name}`;
};
