/** A node of the local fleet as the fleet keeps it, and the environment and commands of its processes. */
import type { ChildProcess } from 'node:child_process';
import { NODE_COMMANDS } from '../../aws/run-command';
import type { LocalCloud } from './cloud';
import type { LightsailState } from './fakes';
import type { HostCommand, HostEvent } from './host-protocol';
import { NODE_MARK } from './processes';

/** One node of the local fleet: a machine with a power state, and the node host of its current boot. */
export interface LocalNode {
  name: string;
  index: number;
  instanceId: string;
  lightsailName: string;
  dir: string;
  /** The node host of the current boot; null while the machine is down. */
  host: ChildProcess | null;
  workerPid: number | null;
  agentPid: number | null;
  /** The node host of this boot is alive. */
  alive: boolean;
  /** The OS runs: false after a crash, during a reboot's downtime and while stopped. */
  up: boolean;
  /** Every process is stopped (a hung kernel); Lightsail still says running. */
  frozen: boolean;
  /** Lightsail's view of the instance, and since when (local ms). */
  power: LightsailState;
  powerSince: number;
}

/** Fleet events, with the node they concern. */
export type MachineEvent = (HostEvent | { type: 'machine'; state: string }) & { node: string };

/** The fixed node commands and what the node host does for each. */
export const HOST_COMMANDS: Record<string, HostCommand> = {
  [NODE_COMMANDS.restartWorker]: 'restart-worker',
  [NODE_COMMANDS.stopWorker]: 'stop-worker',
  [NODE_COMMANDS.startWorker]: 'start-worker',
  [NODE_COMMANDS.restartAgent]: 'restart-agent',
};

/** Deterministic managed-instance ids for the local nodes: `mi-0000000000000001`, … */
export const localInstanceId = (index: number): string => `mi-${index.toString(16).padStart(17, '0')}`;

/** The environment every process of a node gets: the local cloud as its AWS, its own key. */
export const nodeEnv = (cloud: LocalCloud, configFile: string, node: string, dir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_ENDPOINT_URL: cloud.endpoint,
  AWS_REGION: cloud.region,
  AWS_ACCESS_KEY_ID: node,
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  LOG_LEVEL: 'info',
  FLEET_CONFIG_FILE: configFile,
  FLEET_NODE_NAME: node,
  FLEET_DATA_DIR: dir,
  FLEET_HEALTH_PORT: '0',
  [NODE_MARK]: dir,
});
