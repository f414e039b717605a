import { startLocalCloud } from './cloud';

/**
 * Runs the local cloud on its own, for tests and for poking at it by hand: prints one JSON line
 * with its endpoint and resources, and stops on SIGTERM, SIGINT or when stdin closes.
 */
const main = async (): Promise<void> => {
  const started = Date.now();
  const cloud = await startLocalCloud();
  const { endpoint, region, bucket, queueUrl, dlqUrl, topicArn } = cloud;
  console.log(JSON.stringify({ endpoint, region, bucket, queueUrl, dlqUrl, topicArn, startMs: Date.now() - started }));
  const stop = (): void => {
    void cloud.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.once('end', stop);
  process.stdin.resume();
};

void main();
