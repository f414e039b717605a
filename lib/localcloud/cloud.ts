import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EPOCH_HEADER } from '../aws/queue';
import { NODE_COMMANDS } from '../aws/run-command';
import { principalOf, s3Error, s3Path } from './aws-wire';
import { AwsFakes } from './fakes';
import { loadFauxqs, type S3StoreLike } from './fauxqs';
import { Route53Fake } from './route53-fake';

/** Names of the resources every local cloud starts with. */
export const LOCAL = {
  region: 'us-west-2',
  account: '000000000000',
  bucket: 'queens-fleet-local',
  queue: 'queen-fleet-tasks',
  dlq: 'queen-fleet-tasks-dlq',
  topic: 'fleet-events',
  maxReceiveCount: 5,
} as const;

/** The hosted zone and origin record drills move on failover. */
export const LOCAL_ZONE = { id: 'ZLOCALFLEET', record: 'origin.queens-fleet.test' } as const;

/** Faults applied at the cloud's front door to one caller (a node's access key). */
export interface CallerFault {
  /** Drop every request: the node is cut off. */
  partition?: boolean;
  /** Added delay per request, ms. */
  latencyMs?: number;
  /** Share of S3 requests answered 503 SlowDown. */
  throttleRate?: number;
}

/** Callbacks the drill uses to watch the wire. */
export interface CloudObserver {
  /** A PUT that succeeded, with the stored body. */
  s3Put?(key: string, body: Buffer, principal: string): void;
  /** A PUT refused by its precondition. */
  s3Conflict?(key: string, principal: string): void;
  /** An SNS message published. */
  snsPublish?(message: string, principal: string): void;
  /** An SQS ReceiveMessage that handed out messages. */
  /** `epoch` is the consumer's own word, from the x-queen-fleet-epoch header (null if absent). */
  sqsReceive?(count: number, principal: string, epoch: number | null): void;
}

/** Where the local cloud listens and the resources it created. */
export interface CloudEndpoints {
  endpoint: string;
  region: string;
  bucket: string;
  queueUrl: string;
  dlqUrl: string;
  topicArn: string;
}

export interface LocalCloud extends CloudEndpoints {
  fakes: AwsFakes;
  route53: Route53Fake;
  faults: Map<string, CallerFault>;
  /** Requests served, by service, for the drill's cost figures. */
  counts: { s3: Record<'GET' | 'PUT' | 'LIST' | 'HEAD', number>; sqs: number; sns: number; ssm: number };
  /** The same requests by caller (access key) and kind (`s3.GET`, `sqs`, …), for cost benches. */
  callers: Map<string, Record<string, number>>;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * fauxqs ignores conditional PUTs; this hook gives the local S3 the real semantics:
 * If-None-Match: * fails with 412 when the key exists, If-Match fails with 412 on another
 * ETag and 404 when the key is missing. It runs synchronously right before fauxqs's handler,
 * so no other request can slip between the check and the write.
 */
const conditionalPut = (s3: S3StoreLike) => (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
  const ifMatch = request.headers['if-match'];
  const ifNoneMatch = request.headers['if-none-match'];
  const where = request.method === 'PUT' ? s3Path(request.url) : null;
  if (where === null || (ifMatch === undefined && ifNoneMatch === undefined) || !s3.hasBucket(where.bucket)) return done();
  let etag: string | null = null;
  try {
    etag = s3.getObject(where.bucket, where.key).etag;
  } catch {
    etag = null;
  }
  if (ifNoneMatch === '*' && etag !== null) return s3Error(reply, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  if (ifMatch !== undefined && etag === null) return s3Error(reply, 404, 'NoSuchKey', 'The specified key does not exist.');
  if (ifMatch !== undefined && ifMatch !== etag) return s3Error(reply, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  done();
};

const requestKind = (request: FastifyRequest): string | null => {
  const target = String(request.headers['x-amz-target'] ?? '');
  const type = String(request.headers['content-type'] ?? '');
  if (target.startsWith('AmazonSQS.')) return 'sqs';
  if (target.startsWith('AmazonSSM.')) return 'ssm';
  if (target.startsWith('Lightsail_')) return 'lightsail';
  if (request.url.startsWith('/2013-04-01/')) return 'route53';
  if (type.includes('x-www-form-urlencoded')) return 'sns';
  if (request.method === 'PUT') return 's3.PUT';
  if (request.method === 'HEAD') return 's3.HEAD';
  if (request.method === 'GET') return s3Path(request.url) === null ? 's3.LIST' : 's3.GET';
  return null;
};

const countRequest = (cloud: LocalCloud, request: FastifyRequest): void => {
  const kind = requestKind(request);
  if (kind === null) return;
  if (kind.startsWith('s3.')) cloud.counts.s3[kind.slice(3) as 'GET']++;
  else if (kind === 'sqs' || kind === 'sns' || kind === 'ssm') cloud.counts[kind]++;
  const principal = principalOf(request);
  const mine = cloud.callers.get(principal) ?? {};
  mine[kind] = (mine[kind] ?? 0) + 1;
  cloud.callers.set(principal, mine);
};

/**
 * Starts the embedded local cloud on 127.0.0.1 with a random port: fauxqs for S3, SQS and
 * SNS (in-process, with conditional writes), plus the SSM and Lightsail fakes, and the state
 * bucket, task queue with its dead-letter queue, and alert topic already created.
 */
export const startLocalCloud = async (observer: CloudObserver = {}): Promise<LocalCloud> => {
  const fauxqs = await loadFauxqs();
  const s3Store = new fauxqs.S3Store();
  const sqsStore = new fauxqs.SqsStore();
  // An empty host makes queue URLs reuse the request's host (127.0.0.1:port).
  sqsStore.host = '';
  const app: FastifyInstance = fauxqs.buildApp({ logger: false, defaultRegion: LOCAL.region, stores: { s3Store, sqsStore, snsStore: new fauxqs.SnsStore() } });
  const fakes = new AwsFakes(new Set(Object.values(NODE_COMMANDS)));
  const route53 = new Route53Fake();
  const faults = new Map<string, CallerFault>();
  const cloud = { fakes, route53, faults, callers: new Map(), counts: { s3: { GET: 0, PUT: 0, LIST: 0, HEAD: 0 }, sqs: 0, sns: 0, ssm: 0 } } as unknown as LocalCloud;

  app.addHook('onRequest', async (request, reply) => {
    const fault = faults.get(principalOf(request));
    if (fault?.partition === true) {
      request.raw.socket.destroy();
      return reply.hijack();
    }
    if (fault?.latencyMs !== undefined) await sleep(fault.latencyMs);
    const isS3 = requestKind(request)?.startsWith('s3.') === true;
    if (isS3 && fault?.throttleRate !== undefined && Math.random() < fault.throttleRate) {
      s3Error(reply, 503, 'SlowDown', 'Please reduce your request rate.');
      return reply;
    }
    countRequest(cloud, request);
    return undefined;
  });
  app.addHook('preHandler', (request, reply, done) => {
    if (fakes.handles(request)) {
      fakes.handle(request, reply, principalOf(request));
      return;
    }
    if (route53.handles(request)) {
      route53.handle(request, reply);
      return;
    }
    conditionalPut(s3Store)(request, reply, done);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (observer.sqsReceive !== undefined && request.headers['x-amz-target'] === 'AmazonSQS.ReceiveMessage' && reply.statusCode === 200 && typeof payload === 'string') {
      const count = (JSON.parse(payload) as { Messages?: unknown[] }).Messages?.length ?? 0;
      const epoch = Number(request.headers[EPOCH_HEADER] ?? Number.NaN);
      if (count > 0) observer.sqsReceive(count, principalOf(request), Number.isInteger(epoch) ? epoch : null);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const principal = principalOf(request);
    const where = request.method === 'PUT' ? s3Path(request.url) : null;
    if (where !== null && reply.statusCode === 200) {
      try {
        observer.s3Put?.(where.key, s3Store.getObject(where.bucket, where.key).body, principal);
      } catch {
        // A bucket-level PUT: nothing to observe.
      }
    } else if (where !== null && reply.statusCode === 412) observer.s3Conflict?.(where.key, principal);
    const form = request.body as Record<string, string> | undefined;
    if (reply.statusCode === 200 && form?.Action === 'Publish' && form.Message !== undefined) observer.snsPublish?.(form.Message, principal);
    done();
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('local cloud did not bind a TCP port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  s3Store.createBucket(LOCAL.bucket);
  const inject = async (target: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target, host: `127.0.0.1:${address.port}` }, payload: JSON.stringify(body) });
    return JSON.parse(res.body) as Record<string, unknown>;
  };
  const dlq = await inject('AmazonSQS.CreateQueue', { QueueName: LOCAL.dlq });
  const dlqArn = `arn:aws:sqs:${LOCAL.region}:${LOCAL.account}:${LOCAL.dlq}`;
  const queue = await inject('AmazonSQS.CreateQueue', {
    QueueName: LOCAL.queue,
    Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: LOCAL.maxReceiveCount }) },
  });
  const topic = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `Action=CreateTopic&Name=${LOCAL.topic}` });
  const topicArn = /<TopicArn>([^<]+)<\/TopicArn>/.exec(topic.body)?.[1];
  if (typeof queue.QueueUrl !== 'string' || typeof dlq.QueueUrl !== 'string' || topicArn === undefined) throw new Error('local cloud: resources were not created');

  let stopping: Promise<void> | undefined;
  Object.assign(cloud, {
    endpoint,
    region: LOCAL.region,
    bucket: LOCAL.bucket,
    queueUrl: queue.QueueUrl,
    dlqUrl: dlq.QueueUrl,
    topicArn,
    stop: () => (stopping ??= app.close()),
  });
  return cloud;
};
