import { loadConfig } from '../../lib/config';
import { ClientFactory } from '../../lib/aws/clients';
import { Reach } from '../../lib/aws/reach';
import type { StateStore } from '../../lib/aws/state-store';
import { stateStoreFor } from '../../lib/aws/stores';
import type { Config } from '../../lib/core/config';
import { clientTimeouts } from '../../lib/core/timeouts';
import { describeError } from '../../lib/core/errors';
import { listenForClockSkew, mono } from './clock';
import { createLogger, type Logger } from '../../lib/log';

/** What a node daemon gets: its validated config (with its node name), clients, store, logger. */
export interface DaemonContext {
  config: Config & { nodeName: string };
  clients: ClientFactory;
  store: StateStore;
  /** Which stores this process reaches, by the outcome of its clients' requests. */
  reach: Reach;
  log: Logger;
}

/** A started daemon: stopped once on SIGTERM/SIGINT, within `stopTimeoutMs`. */
export interface Daemon {
  close(): Promise<void>;
}

/**
 * The common life of a node daemon (agent, worker): load and validate the config (exit 2 on
 * bad input, so systemd's start limit stops a crash loop), start, and on SIGTERM close once
 * and exit, forcing exit 1 if closing overruns the stop timeout.
 */
export const runDaemon = async (
  name: string,
  start: (ctx: DaemonContext) => Promise<Daemon>,
  required: (keyof Config)[] = [],
): Promise<void> => {
  listenForClockSkew();
  const log = createLogger(name);
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    log.fatal({ err: describeError(error) }, 'bad configuration');
    process.exit(2);
  }
  const missing = (['nodeName', ...required] as const).filter((k) => config[k] === undefined);
  const nodeName = config.nodeName;
  if (missing.length > 0 || nodeName === undefined) {
    log.fatal({ missing }, `the ${name} needs ${missing.join(', ')} in its configuration`);
    process.exit(2);
  }
  const reach = new Reach(mono);
  const clients = new ClientFactory({ region: config.region, timeouts: clientTimeouts(config), reach });
  const store = stateStoreFor(config, clients);
  const daemon = await start({
    config: { ...config, nodeName },
    clients,
    store,
    reach,
    log: log.child({ node: nodeName }),
  });
  const stop = (): void => {
    setTimeout(() => process.exit(1), config.workerStopTimeoutSeconds * 1000).unref();
    void daemon.close().finally(() => {
      clients.destroy();
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
};
