import { createInterface } from 'node:readline';
import { KIND } from '../../lib/harness/localcloud/behaviour';
import { startLocalCloud } from '../../lib/harness/localcloud/cloud';

/**
 * A local cloud with every behaviour off whose caller faults a test sets from outside (fauxqs is
 * an ES module jest cannot load, so the cloud runs here): one JSON command a line on stdin, one
 * JSON answer a line on stdout. `tests/helpers/children.ts` startControlledCloud drives it.
 */
type Command =
  | { op: 'blackhole'; node: string; on: boolean }
  | { op: 's3-outage'; node: string; on: boolean }
  | { op: 'latency'; node: string; ms: number }
  | { op: 'held' }
  /** How often the cloud announced a PUT of the key as applied (its observer's s3Put). */
  | { op: 'observed'; key: string }
  | { op: 'stop' };

const main = async (): Promise<void> => {
  const observed = new Map<string, number>();
  const cloud = await startLocalCloud({
    behaviour: KIND,
    observer: { s3Put: (key) => void observed.set(key, (observed.get(key) ?? 0) + 1) },
  });
  const { endpoint, region, bucket, table, queueUrl, dlqUrl, intakeUrl, notifierFailuresUrl, topicArn } = cloud;
  const say = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
  say({ endpoint, region, bucket, table, queueUrl, dlqUrl, intakeUrl, notifierFailuresUrl, topicArn, startMs: 0 });
  for await (const line of createInterface({ input: process.stdin })) {
    const c = JSON.parse(line) as Command;
    if (c.op === 'blackhole') {
      if (c.on) cloud.blackholes.start(c.node);
      else cloud.blackholes.end(c.node);
    } else if (c.op === 's3-outage') {
      cloud.faults.set(c.node, { ...cloud.faults.get(c.node), s3Outage: c.on });
    } else if (c.op === 'latency') {
      cloud.faults.set(c.node, { ...cloud.faults.get(c.node), latencyMs: c.ms });
    } else if (c.op === 'observed') {
      say({ observed: observed.get(c.key) ?? 0 });
      continue;
    } else if (c.op === 'stop') {
      const started = Date.now();
      await cloud.stop();
      say({ stoppedMs: Date.now() - started });
      process.exit(0);
    }
    say({ held: cloud.blackholes.held });
  }
};

void main();
