import type { FastifyReply, FastifyRequest } from 'fastify';
import { HARNESS_PRINCIPAL, principalOf, s3Error, s3Path } from './aws-wire';
import { purposeOfKey, purposeOfSqsAction, type Purpose } from '../../core/drill/requests';
import { drop } from './blackhole';
import type { Chance } from './chance';
import type { LocalCloud } from './cloud';
import type { S3StoreLike } from './fauxqs';
import type { S3Behaviour } from './s3-behaviour';
import { refuseSkewed } from './signing-time';

/** The local cloud's front door: what a request is, how it is counted, and S3's conditional writes. */
const PRECONDITION = 'At least one of the pre-conditions you specified did not hold';

/**
 * fauxqs ignores conditional PUTs; this hook gives the local S3 the real semantics:
 * If-None-Match: * fails when the key exists, If-Match fails on another ETag (404 when the key
 * is missing), with 412, or 409 ConditionalRequestConflict while another write to the key is
 * recent. It runs synchronously right before fauxqs's handler, so no other request can slip
 * between the check and the write.
 */
export const conditionalPut =
  (s3: S3StoreLike, behaviour: S3Behaviour, struck: Record<string, number>) =>
  (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const ifMatch = request.headers['if-match'];
    const ifNoneMatch = request.headers['if-none-match'];
    const where = request.method === 'PUT' ? s3Path(request.url) : null;
    if (where === null || (ifMatch === undefined && ifNoneMatch === undefined) || !s3.hasBucket(where.bucket))
      return done();
    let etag: string | null = null;
    try {
      etag = s3.getObject(where.bucket, where.key).etag;
    } catch {
      etag = null;
    }
    const fails =
      (ifNoneMatch === '*' && etag !== null) || (ifMatch !== undefined && etag !== null && ifMatch !== etag);
    if (ifMatch !== undefined && etag === null)
      return s3Error(reply, 404, 'NoSuchKey', 'The specified key does not exist.');
    if (!fails) return done();
    if (behaviour.preconditionFailure(where.key) === 409) {
      struck.conditionalConflict = (struck.conditionalConflict ?? 0) + 1;
      return s3Error(
        reply,
        409,
        'ConditionalRequestConflict',
        'A conflicting conditional operation is currently in progress against this resource. Please try again.',
      );
    }
    return s3Error(reply, 412, 'PreconditionFailed', PRECONDITION);
  };

/** What a request is, for counting and faults: `s3.GET`, `s3.PUT`, `sqs`, `ssm`, … */
export const requestKind = (request: FastifyRequest): string | null => {
  const target = String(request.headers['x-amz-target'] ?? '');
  const type = String(request.headers['content-type'] ?? '');
  if (target.startsWith('AmazonSQS.')) return 'sqs';
  if (target.startsWith('AmazonSSM.')) return 'ssm';
  if (target.startsWith('DynamoDB_')) return 'dynamodb';
  if (target.startsWith('Lightsail_')) return 'lightsail';
  if (request.url.startsWith('/2013-04-01/')) return 'route53';
  if (request.url.startsWith('/2015-03-31/functions/')) return 'lambda';
  if (type.includes('x-www-form-urlencoded')) return 'sns';
  if (request.method === 'PUT') return 's3.PUT';
  if (request.method === 'HEAD') return 's3.HEAD';
  if (request.method === 'GET') return s3Path(request.url) === null ? 's3.LIST' : 's3.GET';
  return null;
};

/** What an S3 or SQS request is for (lib/core/drill/requests.ts), or null for other services. */
const purposeOf = (kind: string, request: FastifyRequest): Purpose | null => {
  if (kind === 'sqs')
    return purposeOfSqsAction(String(request.headers['x-amz-target'] ?? '').slice('AmazonSQS.'.length));
  if (!kind.startsWith('s3.')) return null;
  if (kind !== 's3.LIST') return purposeOfKey(s3Path(request.url)?.key ?? '');
  return purposeOfKey(new URLSearchParams(request.url.split('?')[1] ?? '').get('prefix') ?? '');
};

/**
 * Counts a request by service, by caller and kind, and (for the fleet's own callers, not the
 * drill harness's setup) by kind and purpose.
 */
export const countRequest = (
  cloud: Pick<LocalCloud, 'counts' | 'callers' | 'purposes'>,
  request: FastifyRequest,
): void => {
  const kind = requestKind(request);
  if (kind === null) return;
  if (kind.startsWith('s3.')) cloud.counts.s3[kind.slice(3) as 'GET']++;
  else if (kind === 'sqs' || kind === 'sns' || kind === 'ssm' || kind === 'dynamodb') cloud.counts[kind]++;
  const principal = principalOf(request);
  const mine = cloud.callers.get(principal) ?? {};
  mine[kind] = (mine[kind] ?? 0) + 1;
  cloud.callers.set(principal, mine);
  const purpose = principal === HARNESS_PRINCIPAL || principal === 'anonymous' ? null : purposeOf(kind, request);
  if (purpose !== null) cloud.purposes[`${kind}:${purpose}`] = (cloud.purposes[`${kind}:${purpose}`] ?? 0) + 1;
};

/**
 * Adds DynamoDB's billed capacity to the caller's figures (`dynamodb.RRU`, `dynamodb.WRU`) and,
 * for the fleet's own callers, to the purposes (`dynamodb.WRU:lease`): DynamoDB bills request
 * units by item size, not requests, so units are what the cost figures count.
 */
export const billCapacity = (
  cloud: Pick<LocalCloud, 'callers' | 'purposes'>,
  principal: string,
  unit: 'RRU' | 'WRU',
  key: string,
  units: number,
): void => {
  if (units === 0) return;
  const kind = `dynamodb.${unit}`;
  const mine = cloud.callers.get(principal) ?? {};
  mine[kind] = (mine[kind] ?? 0) + units;
  cloud.callers.set(principal, mine);
  if (principal === HARNESS_PRINCIPAL || principal === 'anonymous') return;
  const label = `${kind}:${purposeOfKey(key)}`;
  cloud.purposes[label] = (cloud.purposes[label] ?? 0) + units;
};

/** What the front door's refusals need besides the cloud. */
export interface Door {
  s3b: S3Behaviour;
  chance: Chance;
  strike: (what: string) => void;
}

/**
 * The front door, in the order a request that arrives meets it: a caller cut off loses the
 * connection, a signature too far from the cloud's clock is refused, then the
 * outages and SlowDowns; what passes is counted. Returns the reply when it answered or dropped it.
 */
export const admit = async (
  cloud: Pick<LocalCloud, 'faults' | 'outage' | 'behaviour' | 'counts' | 'callers' | 'purposes'>,
  door: Door,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> => {
  const principal = principalOf(request);
  const fault = cloud.faults.get(principal);
  if (fault?.partition === true) return drop(request, reply);
  const kind = requestKind(request);
  if (refuseSkewed(cloud.behaviour.signatureTime, kind, request, reply)) {
    door.strike('clockSkew');
    return reply;
  }
  const fleet = principal !== HARNESS_PRINCIPAL;
  const isS3 = kind?.startsWith('s3.') === true && fleet;
  if (cloud.outage.dynamodb && fleet && kind === 'dynamodb') {
    // "ServiceUnavailable (HTTP 503): DynamoDB is currently unavailable" (Error handling with DynamoDB).
    const body = {
      __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable',
      message: 'DynamoDB is currently unavailable. (This should be a temporary state.)',
    };
    void reply.status(503).header('content-type', 'application/x-amz-json-1.0').send(JSON.stringify(body));
    return reply;
  }
  // A targeted s3-outage answers as the fleet-wide one, to that caller alone.
  if (isS3 && (cloud.outage.s3 || fault?.s3Outage === true)) {
    s3Error(reply, 503, 'ServiceUnavailable', 'Service is unable to handle request.');
    return reply;
  }
  if (isS3 && ((fault?.throttleRate !== undefined && door.chance.chance(fault.throttleRate)) || door.s3b.slowDown())) {
    door.strike('slowDown');
    s3Error(reply, 503, 'SlowDown', 'Please reduce your request rate.');
    return reply;
  }
  countRequest(cloud, request);
  return undefined;
};
