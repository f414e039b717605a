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

/** What the instances registered with a node's role say: the one that is the node, none, or too many. */
export type InstancePick =
  | { kind: 'one'; instance: InstanceSeen }
  | { kind: 'none' }
  /** More than one online: a forgotten or foreign registration could steer the commands, so none is sent. */
  | { kind: 'ambiguous'; ids: string[] };

/**
 * The instance that is the node among those registered with its role: the one online (a rebuilt
 * node registered again while its old registration lingers offline), else the latest ping.
 */
export const pickInstance = (seen: readonly InstanceSeen[]): InstancePick => {
  const online = seen.filter((i) => i.online);
  if (online.length > 1) return { kind: 'ambiguous', ids: online.map((i) => i.instanceId).sort() };
  const [best] = [...seen].sort(
    (a, b) =>
      Number(b.online) - Number(a.online) ||
      (b.lastPing ?? -Infinity) - (a.lastPing ?? -Infinity) ||
      a.instanceId.localeCompare(b.instanceId),
  );
  return best === undefined ? { kind: 'none' } : { kind: 'one', instance: best };
};
