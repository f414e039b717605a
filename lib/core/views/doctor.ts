import type { Config, NodeSpec } from '../config';
import { freshForMs, isFresh } from './readiness';
import { check, INSTALL, instanceCheck, originCheck, queueChecks, type Check, type DoctorFacts } from './doctor-checks';

/** The check reported when the configuration cannot be loaded at all. */
export const configFailure = (error: string): Check =>
  check(
    'config',
    'fail',
    error,
    'fix the named key in the file --config or FLEET_CONFIG_FILE names, or its FLEET_* variable ' +
      '(every key: docs/configuration.md; the file: fleet init, docs/install.md step 4)',
  );

const configCheck = (c: Config): Check => {
  const names = c.nodes.map((n) => (n.instanceId === undefined ? n.name : `${n.name} (${n.instanceId})`)).join(', ');
  if (c.nodes.length === 0)
    return check(
      'config',
      'fail',
      `valid, but no nodes (bucket ${c.bucket}, region ${c.region})`,
      `list them in the stack's nodes parameter, deploy, then fleet init --stack ${c.stage} --overwrite (${INSTALL})`,
    );
  if (c.nodes.length === 1)
    return check(
      'config',
      'warn',
      `valid, one node: ${names}; no standby to fail over to`,
      `add a standby to the stack's nodes parameter, deploy, fleet enroll it (${INSTALL})`,
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
      "check FLEET_TABLE (the stack's ControlTableName output) and FLEET_REGION, and that these credentials may " +
        'call dynamodb:GetItem on it',
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
      'the role cannot move until it is valid: compare it with the schema in lib/core/schemas.ts and repair it with ' +
        'one node as primary',
    );
  const l = leader.value;
  if (!nodes.some((n) => n.name === l.primary)) {
    return check(
      'leader.json',
      'fail',
      `names ${l.primary} (epoch ${l.epoch}), which the configuration does not list`,
      `add ${l.primary} to the configuration, or move the role: ` +
        'fleet failover --to <node> --reason … --ignore-readiness',
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
      `upgrade the agent on ${spec.name} to this version (${INSTALL}, Operations: Upgrade); it rewrites the object ` +
        `(with news, or every heartbeatKeepAliveSeconds)`,
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
      `on ${spec.name}: sudo systemctl status queen-fleet-peer-sync; journalctl -u queen-fleet-peer-sync ` +
        `(${INSTALL} step 7, Troubleshooting)`,
    );
  }
  const last = hb.value.samples.at(-1);
  const detail =
    `${hb.value.role}, written ${ago}, epoch ${last?.epochSeen ?? '?'}, ${last?.workerProcesses ?? 0} ` +
    `worker process(es)`;
  if (last !== undefined && last.workerProcesses === 0) {
    return check(
      name,
      'warn',
      `${detail}: no worker`,
      `on ${spec.name}: sudo systemctl start queen-fleet-worker (a failover leaves the old primary's worker ` +
        `stopped; a standby needs it running to be ready)`,
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

/** Every check, in the order one fixes things: config, bucket, table, role, nodes, queue, alerts, SSM, DNS. */
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
