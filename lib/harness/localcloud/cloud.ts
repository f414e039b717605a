import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NODE_COMMANDS } from '../../aws/run-command';
import { HARNESS_PRINCIPAL, principalOf, s3Path } from './aws-wire';
import { FAITHFUL, scaleBehaviour, type Behaviour } from './behaviour';
import { Chance } from './chance';
import { LocalDynamo } from './dynamo';
import { AwsFakes } from './fakes';
import { loadFauxqs } from './fauxqs';
import { LambdaFake } from './lambda-fake';
import { NotificationBus } from './notifications';
import { Route53Fake } from './route53-fake';
import { S3Behaviour, type LostResponse } from './s3-behaviour';
import { SqsRedelivery } from './sqs-behaviour';
import { SqsWatch, type SqsObserver } from './sqs-observer';
import { admit, billCapacity, conditionalPut } from './front-door';
import { Blackholes, drop, holdAnswers } from './blackhole';

/** Names of the resources every local cloud starts with. */
export const LOCAL = {
  region: 'us-west-2',
  account: '000000000000',
  bucket: 'queens-fleet-local',
  queue: 'queen-fleet-tasks',
  dlq: 'queen-fleet-tasks-dlq',
  /** Where producers send; the watchdog admits from it to the task queue. */
  intake: 'queen-fleet-intake',
  notifierFailures: 'queen-fleet-notifier-failures',
  topic: 'fleet-events',
  maxReceiveCount: 10,
  /** The DynamoDB table of the control records (the lease). */
  table: 'queens-fleet-local-control',
  /** The watchdog function the agents invoke directly. */
  watchdogFunction: 'queens-fleet-local-watchdog',
} as const;

/** The hosted zone and origin record drills move on failover. */
export const LOCAL_ZONE = { id: 'ZLOCALFLEET', record: 'origin.queens-fleet.test' } as const;

export { HARNESS_PRINCIPAL };

/** Faults applied at the cloud's front door to one caller (a node's access key). */
export interface CallerFault {
  /** Drop every request: the node is cut off. */
  partition?: boolean;
  /** Added delay per request, ms. */
  latencyMs?: number;
  /** Share of S3 requests answered 503 SlowDown. */
  throttleRate?: number;
  /** PUTs whose key matches are applied and their response lost (a `lost-response` fault). */
  loseResponses?: RegExp;
  /** Every S3 request fails with 503 (an `s3-outage` aimed at this caller); its other services work. */
  s3Outage?: boolean;
}

/** Callbacks the drill uses to watch the wire. */
export interface CloudObserver extends SqsObserver {
  /** A PUT that was applied, with the stored body (also when its response is then lost). */
  s3Put?(key: string, body: Buffer, principal: string): void;
  /** A PUT refused by its precondition. */
  s3Conflict?(key: string, principal: string): void;
  /**
   * A write to a DynamoDB item that was applied (also when its response is then lost): the item's
   * body, null if it has none.
   */
  tablePut?(table: string, key: string, body: string | null, principal: string): void;
  /** An SNS message published. */
  snsPublish?(message: string, principal: string): void;
}

/** Where the local cloud listens and the resources it created. */
export interface CloudEndpoints {
  endpoint: string;
  region: string;
  bucket: string;
  /** The control table (DynamoDB). */
  table: string;
  queueUrl: string;
  dlqUrl: string;
  intakeUrl: string;
  /** Where the Slack notifier's undelivered alerts land (resources/alarms.yml); the watchdog reads its depth. */
  notifierFailuresUrl: string;
  topicArn: string;
}

/** A queue's messages, visible and in flight, read from the store itself: no request, nothing counted. */
export type QueueDepth = (queue: 'tasks' | 'intake') => number;

export interface LocalCloud extends CloudEndpoints {
  fakes: AwsFakes;
  route53: Route53Fake;
  lambda: LambdaFake;
  dynamo: LocalDynamo;
  notifications: NotificationBus;
  faults: Map<string, CallerFault>;
  /** Every S3 (DynamoDB) request of every caller but the harness fails (the s3-outage and dynamodb-outage faults). */
  outage: { s3: boolean; dynamodb: boolean };
  /** Callers whose requests vanish unanswered until their fault clears (blackhole-node). */
  blackholes: Blackholes;
  /** The behaviours in force, already divided by the time scale. */
  behaviour: Behaviour;
  chance: Chance;
  /** Requests served, by service, for the drill's cost figures. */
  counts: {
    s3: Record<'GET' | 'PUT' | 'LIST' | 'HEAD', number>;
    sqs: number;
    sns: number;
    ssm: number;
    dynamodb: number;
  };
  /** The same requests by caller (access key) and kind (`s3.GET`, `sqs`, …), for cost benches. */
  callers: Map<string, Record<string, number>>;
  /**
   * The fleet's requests (not the harness's) by kind and purpose, `s3.PUT:lease`, `sqs:poll`
   * (lib/core/drill/requests.ts).
   */
  purposes: Record<string, number>;
  /** How often each behaviour struck (lost responses, 409s, SlowDowns, redeliveries). */
  struck: Record<string, number>;
  depth: QueueDepth;
  stop(): Promise<void>;
}

export interface CloudOptions {
  observer?: CloudObserver;
  /** The faithful behaviours by default (docs/aws-behaviour.md). */
  behaviour?: Behaviour;
  /** Durations of the behaviours are divided by this (a drill's time scale). */
  timeScale?: number;
  seed?: number;
}

/** Requests whose applied write loses its response, decided before fauxqs applies it. */
const losing = new WeakMap<FastifyRequest, LostResponse>();

/**
 * Starts the embedded local cloud on 127.0.0.1 with a random port: fauxqs for S3, SQS and
 * SNS (in-process, with conditional writes), the SSM, Lightsail, Route 53 and Lambda fakes, and
 * the state bucket, task queue with its dead-letter queue, and alert topic already created.
 * Every behaviour of docs/aws-behaviour.md is on unless `behaviour` says otherwise.
 */
export const startLocalCloud = async (options: CloudOptions = {}): Promise<LocalCloud> => {
  const observer = options.observer ?? {};
  const behaviour = scaleBehaviour(options.behaviour ?? FAITHFUL, options.timeScale ?? 1);
  const chance = new Chance(options.seed ?? 1);
  const fauxqs = await loadFauxqs();
  const s3Store = new fauxqs.S3Store();
  const sqsStore = new fauxqs.SqsStore();
  // An empty host makes queue URLs reuse the request's host (127.0.0.1:port).
  sqsStore.host = '';
  const app: FastifyInstance = fauxqs.buildApp({
    logger: false,
    defaultRegion: LOCAL.region,
    stores: { s3Store, sqsStore, snsStore: new fauxqs.SnsStore() },
  });
  const fakes = new AwsFakes(new Set(Object.values(NODE_COMMANDS)), behaviour, chance);
  const r53 = behaviour.route53Propagation;
  const route53 = new Route53Fake(r53.on ? { insyncAfterMs: r53.insyncAfterMs } : {});
  const lambda = new LambdaFake();
  const notifications = new NotificationBus(behaviour.s3Notifications, chance);
  const s3b = new S3Behaviour(behaviour, chance);
  const faults = new Map<string, CallerFault>();
  const blackholes = new Blackholes();
  const struck: Record<string, number> = {};
  const strike = (what: string): void => {
    struck[what] = (struck[what] ?? 0) + 1;
  };
  const dynamo = await LocalDynamo.start(
    behaviour,
    chance,
    strike,
    (table, key, body, principal) => observer.tablePut?.(table, key, body, principal),
    (principal, unit, key, units) => billCapacity(cloud, principal, unit, key, units),
  );
  const cloud = {
    dynamo,
    fakes,
    route53,
    lambda,
    notifications,
    faults,
    blackholes,
    outage: { s3: false, dynamodb: false },
    behaviour,
    chance,
    struck,
    callers: new Map(),
    purposes: {},
    counts: { s3: { GET: 0, PUT: 0, LIST: 0, HEAD: 0 }, sqs: 0, sns: 0, ssm: 0, dynamodb: 0 },
  } as unknown as LocalCloud;

  const door = { s3b, chance, strike };
  /** Requests of a slow caller: read whole, then held for its latency before the door. */
  const slow = new WeakSet<FastifyRequest>();
  app.addHook('onRequest', async (request, reply) => {
    const principal = principalOf(request);
    // A blackholed caller's request has not arrived yet: it meets the door when it does.
    if (blackholes.has(principal)) return void blackholes.hold(request);
    if (faults.get(principal)?.latencyMs === undefined) return admit(cloud, door, request, reply);
    slow.add(request);
    return undefined;
  });
  app.addHook('preHandler', async (request, reply) => {
    // A slow path delays the request itself: it is applied when it arrives, even if its caller
    // gave up meanwhile, as a request already on its way to AWS is (the less kind case).
    if (slow.has(request)) {
      await new Promise((r) => setTimeout(r, faults.get(principalOf(request))?.latencyMs ?? 0));
      return admit(cloud, door, request, reply);
    }
    const arrival = blackholes.arrival(request);
    if (arrival === null) return undefined;
    return (await arrival) === 'drop' ? drop(request, reply) : admit(cloud, door, request, reply);
  });
  const redelivery = new SqsRedelivery(behaviour.sqsRedelivery, chance, strike);
  app.addHook('preHandler', (request, reply, done) => {
    if (fakes.handles(request)) return fakes.handle(request, reply, principalOf(request));
    if (dynamo.handles(request)) {
      const principal = principalOf(request);
      return dynamo.handle(request, reply, {
        principal,
        losesResponse: (key) => faults.get(principal)?.loseResponses?.test(key) === true,
      });
    }
    if (route53.handles(request)) return route53.handle(request, reply);
    if (lambda.handles(request)) return lambda.handle(request, reply);
    if (redelivery.preHandler(request, reply)) return;
    const put = request.method === 'PUT' ? s3Path(request.url) : null;
    if (put !== null && principalOf(request) !== HARNESS_PRINCIPAL) {
      const forced = faults.get(principalOf(request))?.loseResponses?.test(put.key) === true;
      const lost = forced ? s3b.lostHow() : s3b.loseResponse();
      if (lost !== null) losing.set(request, lost);
    }
    conditionalPut(s3Store, s3b, struck)(request, reply, done);
  });
  const sqsWatch = new SqsWatch(observer, LOCAL.queue);
  app.addHook('onSend', (request, _reply, payload, done) => {
    done(null, redelivery.onSend(request, payload));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const principal = principalOf(request);
    sqsWatch.answered(request, reply, payload);
    const where = request.method === 'PUT' ? s3Path(request.url) : null;
    if (where !== null && reply.statusCode === 200) {
      // The write is applied: it is observed and announced, whatever happens to its response.
      s3b.wrote(where.key);
      try {
        observer.s3Put?.(where.key, s3Store.getObject(where.bucket, where.key).body, principal);
      } catch {
        // A bucket-level PUT: nothing to observe.
      }
      notifications.created(where.bucket, where.key);
      const lost = losing.get(request);
      if (lost === 'reset') {
        strike('lostResponseReset');
        request.raw.socket.destroy();
      } else if (lost === 'internal-error') {
        strike('lostResponse500');
        void reply.code(500).header('content-type', 'application/xml').removeHeader('etag');
        done(
          null,
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>' +
            '<Message>We encountered an internal error. Please try again.</Message>' +
            '<RequestId>local</RequestId></Error>',
        );
        return;
      }
    } else if (where !== null && (reply.statusCode === 412 || reply.statusCode === 409))
      observer.s3Conflict?.(where.key, principal);
    done(null, payload);
  });
  holdAnswers(app, blackholes);
  app.addHook('onResponse', (request, reply, done) => {
    const form = request.body as Record<string, string> | undefined;
    if (reply.statusCode === 200 && form?.Action === 'Publish' && form.Message !== undefined)
      observer.snsPublish?.(form.Message, principalOf(request));
    done();
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('local cloud did not bind a TCP port');
  const endpoint = `http://127.0.0.1:${address.port}`;
  s3Store.createBucket(LOCAL.bucket);
  await dynamo.createTable(LOCAL.table);
  const inject = async (target: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await app.inject({
      method: 'POST',
      url: '/',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': target,
        host: `127.0.0.1:${address.port}`,
      },
      payload: JSON.stringify(body),
    });
    return JSON.parse(res.body) as Record<string, unknown>;
  };
  const dlq = await inject('AmazonSQS.CreateQueue', { QueueName: LOCAL.dlq });
  const dlqArn = `arn:aws:sqs:${LOCAL.region}:${LOCAL.account}:${LOCAL.dlq}`;
  const queue = await inject('AmazonSQS.CreateQueue', {
    QueueName: LOCAL.queue,
    Attributes: {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: LOCAL.maxReceiveCount }),
    },
  });
  const intake = await inject('AmazonSQS.CreateQueue', { QueueName: LOCAL.intake });
  const notifierFailures = await inject('AmazonSQS.CreateQueue', { QueueName: LOCAL.notifierFailures });
  const topic = await app.inject({
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `Action=CreateTopic&Name=${LOCAL.topic}`,
  });
  const topicArn = /<TopicArn>([^<]+)<\/TopicArn>/.exec(topic.body)?.[1];
  if (
    typeof queue.QueueUrl !== 'string' ||
    typeof dlq.QueueUrl !== 'string' ||
    typeof intake.QueueUrl !== 'string' ||
    typeof notifierFailures.QueueUrl !== 'string' ||
    topicArn === undefined
  )
    throw new Error('local cloud: resources were not created');

  let stopping: Promise<void> | undefined;
  Object.assign(cloud, {
    endpoint,
    region: LOCAL.region,
    bucket: LOCAL.bucket,
    table: LOCAL.table,
    queueUrl: queue.QueueUrl,
    dlqUrl: dlq.QueueUrl,
    intakeUrl: intake.QueueUrl,
    notifierFailuresUrl: notifierFailures.QueueUrl,
    topicArn,
    depth: (which: 'tasks' | 'intake'): number => {
      const q = sqsStore.getQueueByName(which === 'tasks' ? LOCAL.queue : LOCAL.intake);
      return (
        Number(q?.getAttribute('ApproximateNumberOfMessages') ?? 0) +
        Number(q?.getAttribute('ApproximateNumberOfMessagesNotVisible') ?? 0)
      );
    },
    stop: () =>
      (stopping ??= (async () => {
        fakes.stop();
        notifications.stop();
        blackholes.stop();
        await app.close();
        await dynamo.stop();
      })()),
  });
  return cloud;
};
