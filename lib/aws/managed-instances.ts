import type { SSMClient } from '@aws-sdk/client-ssm';
import { FleetError } from '../core/errors';
import { instanceFilter, pickInstance, type CommandTarget, type InstanceSeen } from '../core/fleet/managed-instance';
import { nodeRoleNameOf } from '../core/stack-names';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** How long a name's instance id is reused: one watchdog run's commands and polls ask SSM once. */
const REMEMBER_MS = 60_000;

/**
 * Finds each node's SSM managed instance: the configured `instanceId`, or the instance
 * registered with the node's own role (DescribeInstanceInformation by `IamRole`), so a node's
 * id never has to be copied into the stack.
 */
export class ManagedInstances {
  private readonly known = new Map<string, { id: string; at: number }>();

  constructor(
    private readonly ssm: SSMClient,
    private readonly where: { stage: string; region: string },
    private readonly now: () => number = Date.now,
  ) {}

  /** The node's managed instance as SSM sees it, or null when none is registered. */
  async describe(target: CommandTarget): Promise<InstanceSeen | null> {
    const filter = instanceFilter(target, this.where);
    const seen: InstanceSeen[] = [];
    let token: string | undefined;
    try {
      do {
        const out = await this.ssm.send(
          new (sdk.ssm().DescribeInstanceInformationCommand)({ Filters: [filter], MaxResults: 50, NextToken: token }),
        );
        for (const i of out.InstanceInformationList ?? []) {
          if (i.InstanceId === undefined) continue;
          if (target.instanceId !== undefined && i.InstanceId !== target.instanceId) continue;
          seen.push({
            instanceId: i.InstanceId,
            online: i.PingStatus === 'Online',
            lastPing: i.LastPingDateTime?.getTime() ?? null,
          });
        }
        token = out.NextToken;
      } while (token !== undefined);
    } catch (error) {
      throw toFleetError(error, `SSM DescribeInstanceInformation ${filter.Key}=${filter.Values.join(',')}`);
    }
    const picked = pickInstance(seen);
    if (picked.kind === 'ambiguous')
      throw new FleetError(
        `${target.name}: ${picked.ids.length} online managed instances hold its role ` +
          `${nodeRoleNameOf(this.where, target.name)} (${picked.ids.join(', ')}): none is commanded; ` +
          'deregister the ones that are not the node (aws ssm deregister-managed-instance)',
      );
    if (picked.kind === 'none') return null;
    if (target.instanceId === undefined)
      this.known.set(target.name, { id: picked.instance.instanceId, at: this.now() });
    return picked.instance;
  }

  /** The id Run Command addresses; throws when the node is not registered (not enrolled yet). */
  async idOf(target: CommandTarget): Promise<string> {
    if (target.instanceId !== undefined) return target.instanceId;
    const cached = this.known.get(target.name);
    if (cached !== undefined && this.now() - cached.at < REMEMBER_MS) return cached.id;
    const found = await this.describe(target);
    if (found === null)
      throw new FleetError(
        `${target.name}: no managed instance is registered with its role ` +
          `${nodeRoleNameOf(this.where, target.name)} (enroll it: fleet enroll ${target.name})`,
      );
    return found.instanceId;
  }
}
