import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import pino from 'pino';
import { LeaseKeeper } from '../../agent/lease-keeper';
import { Loop } from '../../agent/runtime/loop';
import type { StateStore } from '../../lib/aws/state-store';
import { stateStoreFor } from '../../lib/aws/stores';
import { configSchema, type Config } from '../../lib/core/config';
import type { Heartbeat } from '../../lib/core/schemas';
import { bundleEntries } from '../../lib/harness/localcloud/bundle';
import { HARNESS_PRINCIPAL } from '../../lib/harness/localcloud/cloud';
import { sleep } from '../../lib/sleep';
import type { LocalCloudInfo } from './children';
import { ROOT } from './children';
import type { NodeContainer } from './container';

/** The container's node, and a second node played by the test (the standby that takes over). */
export const NODE_1 = { name: 'node-1', instanceId: 'mi-00000000000000001', priority: 10 } as const;
export const NODE_2 = { name: 'node-2', instanceId: 'mi-00000000000000002', priority: 20 } as const;

/** Where install.sh, its bundle and the config wait inside the container, as if copied by scp. */
export const STAGED = { bundle: '/root/queen-fleet', config: '/root/fleet-config.json' } as const;
/** Where the sandbox probe is installed inside the container. */
export const PROBE_JS = '/usr/local/lib/queen-fleet-probe/probe.js';

/**
 * The fleet config the node gets: the local cloud's resources, durations short enough for a
 * test (a lease of 6 s, a sample a second), the rest as on a real fleet. The worker's stop
 * timeout keeps its default (30 s): the units' TimeoutStopSec=45 is set against it.
 */
export const fleetConfig = (cloud: LocalCloudInfo): Record<string, unknown> => ({
  region: cloud.region,
  bucket: cloud.bucket,
  table: cloud.table,
  queueUrl: cloud.queueUrl,
  topicArn: cloud.topicArn,
  nodes: [NODE_1, NODE_2],
  sampleIntervalSeconds: 1,
  syncIntervalSeconds: 2,
  leaseRenewSeconds: 2,
  leaseExpirySeconds: 6,
  // The container shares the host's network: no fixed port that another process may hold.
  healthPort: 0,
});

/**
 * Puts into the container what an operator and the SSM agent would: the built bundle directory
 * and the config (as `scp` does), root's shared credentials file with this node's key (the SSM
 * agent's job on a real node), and a drop-in per unit that points the SDK at the local cloud
 * (docs/install.md, "Changing a unit"). The units themselves are installed untouched.
 */
export const stageNode = (node: NodeContainer, cloud: LocalCloudInfo, bundleDir: string): void => {
  cpSync(bundleDir, node.at(STAGED.bundle), { recursive: true });
  writeFileSync(node.at(STAGED.config), JSON.stringify(fleetConfig(cloud), null, 2));
  mkdirSync(node.at('/root/.aws'), { recursive: true, mode: 0o700 });
  writeFileSync(
    node.at('/root/.aws/credentials'),
    `[default]\naws_access_key_id = ${NODE_1.name}\naws_secret_access_key = local\n`,
    { mode: 0o600 },
  );
  for (const unit of ['queen-fleet-peer-sync', 'queen-fleet-worker']) {
    mkdirSync(node.at(`/etc/systemd/system/${unit}.service.d`), { recursive: true });
    writeFileSync(
      node.at(`/etc/systemd/system/${unit}.service.d/local-cloud.conf`),
      `# The local cloud on the host plays AWS (tests/system/systemd-node.test.ts).\n` +
        `[Service]\nEnvironment=AWS_ENDPOINT_URL=${cloud.endpoint}\n`,
    );
  }
};

/** Bundles the sandbox probe into the container (it runs with the node's /usr/bin/node). */
export const stageProbe = async (node: NodeContainer): Promise<void> => {
  const out = mkdtempSync(join(tmpdir(), 'qf-probe-'));
  try {
    const { probe } = await bundleEntries({ probe: join(ROOT, 'tests/helpers/sandbox-probe.ts') }, out);
    mkdirSync(node.at('/usr/local/lib/queen-fleet-probe'), { recursive: true });
    cpSync(probe, node.at(PROBE_JS));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
};

/**
 * A copy of an installed unit that runs the sandbox probe instead of the daemon: only
 * ExecStart, Type (oneshot: `systemctl start` waits for it), Restart and [Install] differ,
 * every sandbox line is the unit's own. Throws if the unit no longer has the lines it replaces.
 */
export const probeUnit = (unitText: string, name: string): string => {
  const lines = unitText.split('\n');
  const install = lines.indexOf('[Install]');
  const kept = install >= 0 ? lines.slice(0, install) : lines;
  let replaced = 0;
  const out = kept.map((line) => {
    const key = /^(ExecStart|Type|Restart)=/.exec(line)?.[1];
    if (key === undefined) return line;
    replaced++;
    return key === 'ExecStart'
      ? `ExecStart=/usr/bin/node ${PROBE_JS} ${name}`
      : key === 'Type'
        ? 'Type=oneshot'
        : 'Restart=no';
  });
  if (replaced !== 3)
    throw new Error(`probeUnit: expected one ExecStart=, Type= and Restart= line each, replaced ${replaced}`);
  return out.join('\n');
};

/** Clients of the local cloud under a caller's own key (the harness's key is never faulted). */
export const clientsOf = (
  cloud: LocalCloudInfo,
  principal = HARNESS_PRINCIPAL,
): { s3: S3Client; sqs: SQSClient; ssm: SSMClient; dynamodb: DynamoDBClient } => {
  const options = {
    region: cloud.region,
    endpoint: cloud.endpoint,
    credentials: { accessKeyId: principal, secretAccessKey: 'local' },
  };
  return {
    s3: new S3Client({ ...options, forcePathStyle: true }),
    sqs: new SQSClient(options),
    ssm: new SSMClient(options),
    dynamodb: new DynamoDBClient(options),
  };
};

/** The fleet config as the daemons parse it. */
export const parsedConfig = (cloud: LocalCloudInfo): Config => configSchema.parse(fleetConfig(cloud));

/** The state store as `principal` sees it. */
export const storeOf = (cloud: LocalCloudInfo, principal = HARNESS_PRINCIPAL): StateStore =>
  stateStoreFor(
    parsedConfig(cloud),
    ((c) => ({ s3: () => c.s3, dynamodb: () => c.dynamodb }))(clientsOf(cloud, principal)),
  );

/**
 * node-2, played by the test with the agent's own LeaseKeeper (the real lease protocol, its
 * own key and data directory): a ready standby that takes the lease once node-1 stops renewing.
 */
export const startPeer = (cloud: LocalCloudInfo): { stop: () => Promise<void> } => {
  const config = { ...parsedConfig(cloud), nodeName: NODE_2.name, dataDir: mkdtempSync(join(tmpdir(), 'qf-node-2-')) };
  const keeper = new LeaseKeeper({
    config,
    store: storeOf(cloud, NODE_2.name),
    log: pino({ level: 'silent' }),
    ready: () => true,
  });
  // A round never throws for S3 trouble (it waits for the next); nothing else is expected.
  const loop = new Loop(
    () => keeper.nextDelayMs(),
    async () => void (await keeper.round()),
    (error) => console.error('node-2 lease round failed', error),
  );
  loop.start();
  return { stop: () => loop.stop().finally(() => rmSync(config.dataDir, { recursive: true, force: true })) };
};

/**
 * How much longer than on an idle machine every real-time wait of the container test is: it runs
 * beside the drills on 2 cores, where a boot, a bundle's start or a unit's restart takes a
 * multiple of its idle time (CI once waited 20 s for a heartbeat the idle machine has in 5).
 */
export const LOADED = 4;

/** A real-time wait of `idleMs` on an idle machine, sized for a loaded one. */
export const loaded = (idleMs: number): number => idleMs * LOADED;

/** A heartbeat as a timeout message names it. */
export const seen = (h: Heartbeat | undefined): string =>
  h === undefined
    ? 'no heartbeat of node-1'
    : `a heartbeat of boot ${h.boot}: ${h.role}, ${h.samples.length} sample(s), ` +
      `${h.samples.at(-1)?.workerProcesses ?? '?'} worker process(es)`;

/** What a probe saw when it found no value yet; the last of it names a wait that timed out. */
export type Saw = (what: string) => void;

/**
 * Polls `probe` every `everyMs` until it returns a value other than undefined, or throws after
 * `timeoutMs` naming what it waited for and what it saw last: what the probe said it saw
 * (`saw`), or the error it threw (a failed read is seen, and polled again).
 */
export const waitFor = async <T>(
  what: string,
  timeoutMs: number,
  probe: (saw: Saw) => Promise<T | undefined> | T | undefined,
  everyMs = 200,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let last = 'nothing (the probe said nothing)';
  for (;;) {
    try {
      const value = await probe((seen) => (last = seen));
      if (value !== undefined) return value;
    } catch (error) {
      last = `an error: ${String(error)}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}; saw last ${last}`);
    }
    await sleep(everyMs);
  }
};

/** The pino lines of a unit's journal (its own output; systemd's lines about it are left out). */
export const logLines = (journal: string): { msg?: string; [key: string]: unknown }[] =>
  journal.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as { msg?: string }];
    } catch {
      return [];
    }
  });

/** What /proc says of a live process's privileges: capability sets, no_new_privs, seccomp mode. */
export const privileges = (pid: number): Record<'CapEff' | 'CapBnd' | 'CapAmb' | 'NoNewPrivs' | 'Seccomp', string> => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): string => new RegExp(`^${name}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
  return {
    CapEff: field('CapEff'),
    CapBnd: field('CapBnd'),
    CapAmb: field('CapAmb'),
    NoNewPrivs: field('NoNewPrivs'),
    Seccomp: field('Seccomp'),
  };
};

/** Each mount point a live process sees, with its options (the topmost mount where several stack). */
export const mountOptions = (pid: number): Map<string, string[]> => {
  const mounts = new Map<string, string[]>();
  for (const line of readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')) {
    const fields = line.split(' ');
    if (fields[4] !== undefined && fields[5] !== undefined) mounts.set(fields[4], fields[5].split(','));
  }
  return mounts;
};
