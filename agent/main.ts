import { AlertTopic } from '../lib/aws/alerts';
import { TaskQueue } from '../lib/aws/queue';
import { WatchdogTrigger } from '../lib/aws/trigger';
import { wall } from './runtime/clock';
import { runDaemon } from './runtime/daemon';
import { Agent } from './agent';

/** Entry point of `queen-fleet-peer-sync`. */
void runDaemon('agent', async ({ config, clients, store, reach, log }) => {
  const queue = config.queueUrl === undefined ? null : new TaskQueue(clients.sqs(), config.queueUrl);
  const instanceId = config.nodes.find((n) => n.name === config.nodeName)?.instanceId;
  const alerts =
    config.topicArn === undefined ? null : new AlertTopic(clients.sns(), config.topicArn, config.runbookUrl);
  const trigger =
    config.watchdogFunction === undefined ? null : new WatchdogTrigger(clients.lambda(), config.watchdogFunction);
  const agent = new Agent({
    config,
    store,
    queue,
    log,
    now: wall,
    alerts,
    trigger,
    reach,
    ...(instanceId === undefined ? {} : { instanceId }),
  });
  const port = await agent.start();
  log.info({ healthPort: port }, 'agent started');
  return agent;
});
