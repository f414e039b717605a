import { startLocalCloud } from './cloud';
import { KIND, resolveBehaviour } from './behaviour';
import { ContainerMachine, containerNodeSchema } from './container';
import { parseWith } from '../../core/validate';

/**
 * Runs the local cloud on its own, for tests and for poking at it by hand: prints one JSON line
 * with its endpoint and resources, and stops on SIGTERM, SIGINT or when stdin closes. Every
 * faithful behaviour is on; `--time-scale N` runs AWS's durations N times faster (Route 53's
 * 60 s of PENDING, SSM's timeouts), `--behaviour JSON` overrides some (as a scenario's
 * "behaviour" does), `--kind` turns every behaviour off. `--container JSON` (`{ name, instanceId,
 * pidFile }`) makes a systemd container the machine the SSM and Lightsail fakes act on.
 */
const main = async (): Promise<void> => {
  const args = process.argv.slice(2);
  const at = args.indexOf('--time-scale');
  const timeScale = at >= 0 ? Number(args[at + 1]) : 1;
  if (!Number.isFinite(timeScale) || timeScale <= 0)
    throw new Error(`--time-scale must be a positive number, got ${args[at + 1] ?? 'nothing'}`);
  const overrides = args.indexOf('--behaviour');
  const behaviour = args.includes('--kind')
    ? KIND
    : resolveBehaviour(overrides >= 0 ? (JSON.parse(args[overrides + 1] ?? '{}') as unknown) : {});
  const started = Date.now();
  const container = args.indexOf('--container');
  const node =
    container >= 0
      ? parseWith(containerNodeSchema, JSON.parse(args[container + 1] ?? '{}') as unknown, '--container')
      : null;
  const cloud = await startLocalCloud({ behaviour, timeScale });
  if (node !== null) cloud.fakes.attach(new ContainerMachine(node));
  const { endpoint, region, bucket, table, queueUrl, dlqUrl, intakeUrl, notifierFailuresUrl, topicArn } = cloud;
  console.log(
    JSON.stringify({
      endpoint,
      region,
      bucket,
      table,
      queueUrl,
      dlqUrl,
      intakeUrl,
      notifierFailuresUrl,
      topicArn,
      startMs: Date.now() - started,
    }),
  );
  const stop = (): void => {
    void cloud.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.once('end', stop);
  process.stdin.resume();
};

void main();
