import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { jsonBody, jsonError } from './aws-wire';

/** What the fakes need from the local fleet: run allowed commands, report instance state. */
export interface FleetControl {
  /** Runs an allowed command on a node; resolves when it finished. Unknown instance: null. */
  runCommand(instanceId: string, command: string): Promise<{ ok: boolean; output: string }> | null;
  instances(): { instanceId: string; name: string; lightsailName: string; running: boolean; agentOnline: boolean }[];
}

interface Invocation {
  commandId: string;
  instanceId: string;
  status: 'Pending' | 'InProgress' | 'Success' | 'Failed';
  output: string;
  requestedAt: number;
}

/** Observations the drill reads: every command the SSM fake ran. */
export interface CommandRecord {
  commandId: string;
  instanceId: string;
  command: string;
  principal: string;
  ok: boolean | null;
  requestedAt: number;
  finishedAt: number | null;
}

/**
 * Wire-level fakes of the SSM Run Command and Lightsail calls the project makes (awsJson 1.1),
 * backed by the local fleet's processes. Only AWS-RunShellScript with commands from the
 * allow-list runs; anything else fails like a command that does not exist on the node.
 */
export class AwsFakes {
  private readonly invocations = new Map<string, Invocation>();
  readonly commands: CommandRecord[] = [];
  fleet: FleetControl | null = null;
  /** Called when a command finishes, for the drill's timeline. */
  onCommandDone: ((record: CommandRecord) => void) | undefined;

  constructor(private readonly allowed: ReadonlySet<string>) {}

  /** True when this request is for a fake (by its X-Amz-Target). */
  handles(request: FastifyRequest): boolean {
    const target = String(request.headers['x-amz-target'] ?? '');
    return target.startsWith('AmazonSSM.') || target.startsWith('Lightsail_20161128.');
  }

  handle(request: FastifyRequest, reply: FastifyReply, principal: string): void {
    const target = String(request.headers['x-amz-target'] ?? '');
    const [service, action] = target.split('.');
    let body: Record<string, unknown>;
    try {
      body = jsonBody(request);
    } catch {
      jsonError(reply, 400, 'SerializationException', 'body is not JSON');
      return;
    }
    const send = (out: unknown): void => {
      void reply.status(200).header('content-type', 'application/x-amz-json-1.1').send(JSON.stringify(out));
    };
    if (service === 'AmazonSSM') this.ssm(action ?? '', body, principal, send, reply);
    else this.lightsail(action ?? '', body, send, reply);
  }

  private ssm(action: string, body: Record<string, unknown>, principal: string, send: (o: unknown) => void, reply: FastifyReply): void {
    const fleet = this.fleet;
    switch (action) {
      case 'SendCommand': {
        const ids = (body.InstanceIds as string[] | undefined) ?? [];
        const commands = ((body.Parameters as Record<string, string[]> | undefined)?.commands ?? []).join('\n');
        if (body.DocumentName !== 'AWS-RunShellScript') return jsonError(reply, 400, 'InvalidDocument', `document ${String(body.DocumentName)} is not available`);
        if (ids.length !== 1) return jsonError(reply, 400, 'InvalidInstanceId', 'exactly one instance id is supported');
        const instanceId = ids[0] ?? '';
        if (fleet === null || !fleet.instances().some((i) => i.instanceId === instanceId)) return jsonError(reply, 400, 'InvalidInstanceId', `${instanceId} is not a managed instance`);
        const commandId = randomUUID();
        const inv: Invocation = { commandId, instanceId, status: 'Pending', output: '', requestedAt: Date.now() };
        const record: CommandRecord = { commandId, instanceId, command: commands, principal, ok: null, requestedAt: inv.requestedAt, finishedAt: null };
        this.invocations.set(`${commandId}/${instanceId}`, inv);
        this.commands.push(record);
        const finish = (ok: boolean, output: string): void => {
          inv.status = ok ? 'Success' : 'Failed';
          inv.output = output;
          record.ok = ok;
          record.finishedAt = Date.now();
          this.onCommandDone?.(record);
        };
        if (!this.allowed.has(commands)) finish(false, `command not allowed on this node: ${commands.slice(0, 80)}`);
        else {
          inv.status = 'InProgress';
          const running = fleet.runCommand(instanceId, commands);
          if (running === null) finish(false, 'instance unreachable');
          else running.then((r) => finish(r.ok, r.output), (e: unknown) => finish(false, String(e)));
        }
        return send({ Command: { CommandId: commandId, DocumentName: 'AWS-RunShellScript', InstanceIds: ids, Status: 'Pending' } });
      }
      case 'GetCommandInvocation': {
        const inv = this.invocations.get(`${String(body.CommandId)}/${String(body.InstanceId)}`);
        if (inv === undefined) return jsonError(reply, 400, 'InvocationDoesNotExist', 'no such invocation');
        return send({ CommandId: inv.commandId, InstanceId: inv.instanceId, Status: inv.status, StatusDetails: inv.status, StandardOutputContent: '', StandardErrorContent: inv.status === 'Failed' ? inv.output : '' });
      }
      case 'DescribeInstanceInformation': {
        const list = (fleet?.instances() ?? []).map((i) => ({ InstanceId: i.instanceId, PingStatus: i.running && i.agentOnline ? 'Online' : 'ConnectionLost', ComputerName: i.name, ResourceType: 'ManagedInstance' }));
        return send({ InstanceInformationList: list });
      }
      default:
        return jsonError(reply, 400, 'InvalidAction', `the local SSM fake does not implement ${action}`);
    }
  }

  private lightsail(action: string, body: Record<string, unknown>, send: (o: unknown) => void, reply: FastifyReply): void {
    const list = this.fleet?.instances() ?? [];
    const stateOf = (running: boolean): { code: number; name: string } => (running ? { code: 16, name: 'running' } : { code: 80, name: 'stopped' });
    switch (action) {
      case 'GetInstanceState': {
        const found = list.find((i) => i.lightsailName === body.instanceName);
        if (found === undefined) return jsonError(reply, 400, 'NotFoundException', `instance ${String(body.instanceName)} not found`);
        return send({ state: stateOf(found.running) });
      }
      case 'GetInstances':
        return send({ instances: list.map((i) => ({ name: i.lightsailName, state: stateOf(i.running) })) });
      default:
        return jsonError(reply, 400, 'InvalidAction', `the local Lightsail fake does not implement ${action}`);
    }
  }
}
