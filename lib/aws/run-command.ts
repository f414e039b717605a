import { GetCommandInvocationCommand, SendCommandCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { FleetError } from '../core/errors';
import { toFleetError } from './errors';

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

/** SSM Run Command: send one of the fixed node commands and read its outcome. */
export class RunCommand {
  constructor(private readonly ssm: SSMClient) {}

  async send(instanceId: string, command: NodeCommand, comment: string, timeoutSeconds = 60): Promise<string> {
    try {
      const out = await this.ssm.send(
        new SendCommandCommand({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: { commands: [NODE_COMMANDS[command]] },
          Comment: comment.slice(0, 100),
          TimeoutSeconds: Math.max(30, Math.ceil(timeoutSeconds)),
        }),
      );
      const id = out.Command?.CommandId;
      if (id === undefined) throw new FleetError('SSM SendCommand returned no CommandId');
      return id;
    } catch (error) {
      throw toFleetError(error, `SSM SendCommand to ${instanceId}`);
    }
  }

  async result(commandId: string, instanceId: string): Promise<InvocationResult> {
    try {
      const out = await this.ssm.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }));
      const word = out.Status ?? 'Pending';
      const output = [out.StatusDetails === word ? undefined : out.StatusDetails, out.StandardErrorContent].filter((s) => s !== undefined && s !== '').join(' ');
      return { status: STATUS[word] ?? 'running', detail: `${word}${output === '' ? '' : `: ${output}`}`.slice(0, 500) };
    } catch (error) {
      throw toFleetError(error, `SSM GetCommandInvocation ${commandId}`);
    }
  }
}
