import { nodeRoleNameOf } from '../stack-names';

/** A node as Run Command addresses it: its configured managed-instance id, or else its name. */
export interface CommandTarget {
  name: string;
  instanceId?: string | undefined;
}

/** One managed instance as DescribeInstanceInformation tells it. */
export interface InstanceSeen {
  instanceId: string;
  online: boolean;
  /** Its SSM agent's last ping (ms since the epoch), when known. */
  lastPing: number | null;
}

/**
 * How to find a node's managed instance: by its configured id, or else by the node's own role,
 * which only that node's activation hands out (`fleet enroll`): the instance holding node-1's role
 * is the one that writes node-1's heartbeat, so no id needs copying into the stack.
 */
export const instanceFilter = (
  target: CommandTarget,
  where: { stage: string; region: string },
): { Key: 'InstanceIds' | 'IamRole'; Values: string[] } =>
  target.instanceId !== undefined
    ? { Key: 'InstanceIds', Values: [target.instanceId] }
    : { Key: 'IamRole', Values: [nodeRoleNameOf(where, target.name)] };

/**
 * The instance that is the node among those registered with its role: an online one before a lost
 * one (a rebuilt node registered again while its old registration lingers), then the latest ping.
 */
export const pickInstance = (seen: readonly InstanceSeen[]): InstanceSeen | null =>
  [...seen].sort(
    (a, b) =>
      Number(b.online) - Number(a.online) ||
      (b.lastPing ?? -Infinity) - (a.lastPing ?? -Infinity) ||
      a.instanceId.localeCompare(b.instanceId),
  )[0] ?? null;
