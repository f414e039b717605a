import type { SSMClient } from '@aws-sdk/client-ssm';
import { FleetError } from '../core/errors';
import type { CommandTarget } from '../core/fleet/managed-instance';
import type { ManagedInstances } from './managed-instances';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/**
 * The only commands the watchdog ever runs on a node. Fixed strings: nothing from an event,
 * a heartbeat or a config value is interpolated into a shell command.
 */
export const NODE_COMMANDS = {
  restartWorker: 'systemctl restart queen-fleet-worker',
  stopWorker: 'systemctl stop queen-fleet-worker',
  startWorker: 'systemctl start queen-fleet-worker',
  restartAgent: 'systemctl restart queen-fleet-peer-sync',
} as const;
export type NodeCommand = keyof typeof NODE_COMMANDS;

export type InvocationStatus = 'pending' | 'running' | 'succeeded' | 'failed';

export interface InvocationResult {
  status: InvocationStatus;
  /** SSM's own status word and any output, for people. */
  detail: string;
}

const STATUS: Record<string, InvocationStatus> = {
  Pending: 'pending',
  InProgress: 'running',
  Delayed: 'running',
  Success: 'succeeded',
  Cancelled: 'failed',
  TimedOut: 'failed',
  Failed: 'failed',
  Cancelling: 'failed',
};

/**
 * SSM Run Command: send one of the fixed node commands and read its outcome. A node is addressed
 * by its configured id, or else by its name through `instances` (the instance holding its role).
 */
export class RunCommand {
  constructor(
    private readonly ssm: SSMClient,
    private readonly instances: ManagedInstances | null = null,
  ) {}

  private async idOf(target: CommandTarget): Promise<string> {
    if (target.instanceId !== undefined) return target.instanceId;
    if (this.instances === null) throw new FleetError(`${target.name}: no instanceId configured`);
    return this.instances.idOf(target);
  }

  /**
   * Sends a fixed command. `timeoutSeconds` is the delivery timeout (SSM's minimum is 30 s): a
   * node that cannot be reached until then never runs it. The execution timeout is as short,
   * so an invocation stuck on a node that died mid-command ends within both (not AWS's 1 h).
   */
  async send(target: CommandTarget, command: NodeCommand, comment: string, timeoutSeconds = 60): Promise<string> {
    const timeout = Math.max(30, Math.ceil(timeoutSeconds));
    const instanceId = await this.idOf(target);
    try {
      const out = await this.ssm.send(
        new (sdk.ssm().SendCommandCommand)({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: { commands: [NODE_COMMANDS[command]], executionTimeout: [String(timeout)] },
          Comment: comment.slice(0, 100),
          TimeoutSeconds: timeout,
        }),
      );
      const id = out.Command?.CommandId;
      if (id === undefined) throw new FleetError('SSM SendCommand returned no CommandId');
      return id;
    } catch (error) {
      throw toFleetError(error, `SSM SendCommand to ${instanceId}`);
    }
  }

  async result(commandId: string, target: CommandTarget): Promise<InvocationResult> {
    const instanceId = await this.idOf(target);
    try {
      const out = await this.ssm.send(
        new (sdk.ssm().GetCommandInvocationCommand)({ CommandId: commandId, InstanceId: instanceId }),
      );
      const word = out.Status ?? 'Pending';
      const output = [out.StatusDetails === word ? undefined : out.StatusDetails, out.StandardErrorContent]
        .filter((s) => s !== undefined && s !== '')
        .join(' ');
      return {
        status: STATUS[word] ?? 'running',
        detail: `${word}${output === '' ? '' : `: ${output}`}`.slice(0, 500),
      };
    } catch (error) {
      throw toFleetError(error, `SSM GetCommandInvocation ${commandId}`);
    }
  }

  /**
   * The id of the command sent to the instance with exactly this comment, or null: whether a
   * send whose answer never reached its caller (or whose record was lost) went out. Only the
   * instance's recent commands are read (SSM keeps 30 days), up to `pages` pages of 50; no
   * clock is compared.
   */
  async findSent(target: CommandTarget, comment: string, pages = 4): Promise<string | null> {
    const instanceId = await this.idOf(target);
    let token: string | undefined;
    for (let page = 0; page < pages; page++) {
      try {
        const out = await this.ssm.send(
          new (sdk.ssm().ListCommandsCommand)({ InstanceId: instanceId, MaxResults: 50, NextToken: token }),
        );
        const found = (out.Commands ?? []).find(
          (c) => c.Comment === comment.slice(0, 100) && c.CommandId !== undefined,
        );
        if (found?.CommandId !== undefined) return found.CommandId;
        token = out.NextToken;
      } catch (error) {
        throw toFleetError(error, `SSM ListCommands ${instanceId}`);
      }
      if (token === undefined) return null;
    }
    return null;
  }

  /**
   * Cancels a command the caller gave up on: one still waiting for an unreachable node will not
   * run when the node comes back. AWS does not promise to stop one already running.
   */
  async cancel(commandId: string, target: CommandTarget): Promise<void> {
    const instanceId = await this.idOf(target);
    try {
      await this.ssm.send(new (sdk.ssm().CancelCommandCommand)({ CommandId: commandId, InstanceIds: [instanceId] }));
    } catch (error) {
      throw toFleetError(error, `SSM CancelCommand ${commandId}`);
    }
  }
}
