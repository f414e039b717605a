import { AlertTopic } from '../../lib/aws/alerts';
import { TaskQueue } from '../../lib/aws/queue';
import { wall } from '../../lib/clock';
import { runDaemon } from '../../lib/daemon';
import { Worker } from './worker';

/** Entry point of `queen-fleet-worker`. */
void runDaemon(
  'worker',
  async ({ config, clients, store, log }) => {
    const alerts = config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn);
    const worker = new Worker({ config, store, queue: new TaskQueue(clients.sqs(), config.queueUrl ?? ''), log, now: wall, alerts });
    await worker.start();
    log.info({ pid: process.pid }, 'worker started');
    return worker;
  },
  ['queueUrl'],
);
