import type { Config, NodeSpec } from '../config';
import type { Confirmation } from '../fleet/liveness';
import type { HeartbeatObservation, Observed } from './observed';
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

export const check = (name: string, status: CheckStatus, detail: string, hint: string | null = null): Check => ({
  name,
  status,
  detail,
  hint,
});
export const INSTALL = 'docs/install.md';

export const queueChecks = (facts: DoctorFacts): Check[] => {
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

export const instanceCheck = (spec: NodeSpec, c: Confirmation | undefined): Check => {
  const name = `ssm ${spec.name}`;
  const lightsail =
    spec.lightsailName === undefined
      ? 'no lightsailName configured'
      : `Lightsail ${spec.lightsailName}: ${c?.instance ?? 'unknown'}`;
  if (c?.instance === 'stopped')
    return check(name, 'fail', `${lightsail}`, `start ${spec.lightsailName ?? spec.name} in the Lightsail console`);
  const instance = spec.instanceId ?? `the instance with ${spec.name}'s role`;
  if (c?.ssm === 'online') return check(name, 'ok', `${instance} online; ${lightsail}`);
  if (c?.ssm === 'lost') {
    return check(
      name,
      'fail',
      `${instance}: connection lost; ${lightsail}`,
      `on ${spec.name}: sudo systemctl restart amazon-ssm-agent (or snap restart amazon-ssm-agent); the watchdog ` +
        `cannot restart or stop its worker without it`,
    );
  }
  return check(
    name,
    'fail',
    `${instance} is not registered with SSM (or not visible to these credentials); ${lightsail}`,
    `enroll it: fleet enroll ${spec.name}, then run the command it prints on the node (${INSTALL})`,
  );
};

const sameValue = (a: string, b: string): boolean =>
  a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');

export const originCheck = (facts: DoctorFacts): Check => {
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
      `${where} → ${origin.value}${holder === undefined ? '' : ` (${holder.name})`}, but the ` +
        `primary ${primary.name} has ${primary.address}`,
      `UPSERT ${config.recordName ?? 'the record'} to ${primary.address}, or repeat the failover`,
    );
  }
  return check(name, 'ok', `${where} → ${origin.value} (${primary.name}, the primary)`);
};

/**
 * The URL of a dead-letter queue from the source queue's URL and the DLQ's ARN: SQS requires
 * both in one account and region, so only the last path segment differs.
 */
export const deadLetterUrl = (queueUrl: string, arn: string): string | null => {
  const name = arn.split(':').at(-1);
  const cut = queueUrl.lastIndexOf('/');
  return name === undefined || name === '' || cut < 0 ? null : `${queueUrl.slice(0, cut + 1)}${name}`;
};
