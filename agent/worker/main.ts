import { loadConfig } from '../../lib/config';
import { ClientFactory } from '../../lib/aws/clients';
import { TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { describeError } from '../../lib/core/errors';
import { createLogger } from '../../lib/log';
import { Worker } from './worker';

/** Entry point of `queen-fleet-worker`. Exits 2 on bad configuration. */
const main = async (): Promise<void> => {
  const log = createLogger('worker');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    log.fatal({ err: describeError(error) }, 'bad configuration');
    process.exit(2);
  }
  const { nodeName, queueUrl } = config;
  if (nodeName === undefined || queueUrl === undefined) {
    log.fatal('FLEET_NODE_NAME and FLEET_QUEUE_URL are required for the worker');
    process.exit(2);
  }
  const clients = new ClientFactory({ region: config.region });
  const store = new StateStore(clients.s3(), { bucket: config.bucket, prefix: config.prefix, maxObjectBytes: config.maxObjectBytes });
  const worker = new Worker({ config: { ...config, nodeName }, store, queue: new TaskQueue(clients.sqs(), queueUrl), log: log.child({ node: nodeName }), now: Date.now });
  await worker.start();
  log.info({ node: nodeName, pid: process.pid }, 'worker started');
  const stop = (): void => {
    const force = setTimeout(() => process.exit(1), config.workerStopTimeoutSeconds * 1000);
    force.unref();
    void worker.close().finally(() => {
      clients.destroy();
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
};

void main();
