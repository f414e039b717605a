import { AlertTopic } from '../../lib/aws/alerts';
import { ArtifactStore } from '../../lib/aws/artifacts';
import { guardWrites } from '../../lib/aws/fence';
import { TaskQueue } from '../../lib/aws/queue';
import { wall } from '../runtime/clock';
import { runDaemon } from '../runtime/daemon';
import { Worker } from './worker';

/** Entry point of `queen-fleet-worker`. */
void runDaemon(
  'worker',
  async ({ config, clients, store, log }) => {
    const alerts =
      config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn, config.runbookUrl);
    const deadLetters =
      config.deadLetterQueueUrl === undefined ? null : new TaskQueue(clients.sqs(), config.deadLetterQueueUrl);
    const artifacts = new ArtifactStore(clients.s3(), {
      bucket: config.artifactsBucket ?? config.bucket,
      prefix: config.prefix,
    });
    const worker = new Worker({
      config,
      store,
      queue: new TaskQueue(clients.sqs(), config.queueUrl ?? ''),
      deadLetters,
      log,
      now: wall,
      alerts,
      artifacts,
    });
    // Every write attempt of the worker's S3 client, retries included, needs a valid lease.
    guardWrites(clients.s3(), () => worker.mayAct(), config.nodeName);
    await worker.start();
    log.info({ pid: process.pid }, 'worker started');
    return worker;
  },
  ['queueUrl'],
);
