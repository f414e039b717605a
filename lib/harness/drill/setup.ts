import { resolve } from 'node:path';
import { ClientFactory } from '../../aws/clients';
import { buildConfig, type Config } from '../../core/config';
import type { Scenario } from '../../core/drill/scenario';
import { SEED_STAGES } from '../../core/pipeline';
import { LOCAL, LOCAL_ZONE, type LocalCloud } from '../localcloud/cloud';
import { sleep } from '../../sleep';

/** What a drill sets up before it runs: its configuration, its clients, and how it waits. */

/** The watchdog function's timeout (serverless.yml `functions.watchdog.timeout`; a test holds them equal). */
export const WATCHDOG_TIMEOUT_SECONDS = 60;

/** The stage command drills run with `workload.stages: "command"`. */
const STAGE_SCRIPT = resolve(__dirname, 'stage.sh');

export const waitFor = async (cond: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> => {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until || signal?.aborted === true) return false;
    await sleep(50, signal);
  }
  return true;
};

/** The drill's configuration: the scenario's overrides, the local cloud's resources, the fleet. */
export const drillConfig = (scenario: Scenario, cloud: LocalCloud): Config =>
  buildConfig(
    {},
    {
      // Every metric of the catalogue: a drill's report shows the series that explain it.
      metrics: 'detailed',
      ...scenario.config,
      region: cloud.region,
      bucket: cloud.bucket,
      table: cloud.table,
      queueUrl: cloud.queueUrl,
      intakeQueueUrl: cloud.intakeUrl,
      notifierFailureQueueUrl: cloud.notifierFailuresUrl,
      deadLetterQueueUrl: cloud.dlqUrl,
      topicArn: cloud.topicArn,
      nodes: Array.from({ length: scenario.nodes }, (_, i) => ({
        // By name alone, as the stack lists nodes: the watchdog finds each one's instance by its role.
        name: `node-${i + 1}`,
        lightsailName: `queen-fleet-node-${i + 1}`,
        priority: i + 1,
        // Documentation addresses (RFC 5737): they only ever appear in the fake DNS record.
        address: `192.0.2.${i + 1}`,
      })),
      hostedZoneId: LOCAL_ZONE.id,
      recordName: LOCAL_ZONE.record,
      watchdogFunction: LOCAL.watchdogFunction,
      ...(scenario.workload.stages === 'command'
        ? { stageCommands: Object.fromEntries(SEED_STAGES.map((stage) => [stage, ['/bin/sh', STAGE_SCRIPT]])) }
        : {}),
      ...(scenario.workload.concurrency === undefined ? {} : { concurrency: scenario.workload.concurrency }),
    },
  );

/** Clients of the local cloud, under one principal's key; nothing is read from this process's environment. */
export const localClients = (cloud: LocalCloud, principal: string): ClientFactory =>
  new ClientFactory(
    {
      region: cloud.region,
      endpoint: cloud.endpoint,
      credentials: { accessKeyId: principal, secretAccessKey: 'local' },
    },
    {},
  );
