import { loadConfig } from '../lib/config';
import { ClientFactory } from '../lib/aws/clients';
import { TaskQueue } from '../lib/aws/queue';
import { StateStore } from '../lib/aws/state-store';
import { describeError } from '../lib/core/errors';
import { createLogger } from '../lib/log';
import { Agent } from './agent';

/** Entry point of `queen-fleet-peer-sync`. Exits 2 on bad configuration (systemd will not spin). */
const main = async (): Promise<void> => {
  const log = createLogger('agent');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    log.fatal({ err: describeError(error) }, 'bad configuration');
    process.exit(2);
  }
  const nodeName = config.nodeName;
  if (nodeName === undefined) {
    log.fatal('FLEET_NODE_NAME is required for the agent');
    process.exit(2);
  }
  const clients = new ClientFactory({ region: config.region });
  const store = new StateStore(clients.s3(), { bucket: config.bucket, prefix: config.prefix, maxObjectBytes: config.maxObjectBytes });
  const queue = config.queueUrl === undefined ? null : new TaskQueue(clients.sqs(), config.queueUrl);
  const instanceId = config.nodes.find((n) => n.name === nodeName)?.instanceId;
  const agent = new Agent({ config: { ...config, nodeName }, store, queue, log: log.child({ node: nodeName }), now: Date.now, ...(instanceId === undefined ? {} : { instanceId }) });
  const port = await agent.start();
  log.info({ node: nodeName, healthPort: port }, 'agent started');
  const stop = (): void => {
    void agent.close().finally(() => {
      clients.destroy();
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
};

void main();
