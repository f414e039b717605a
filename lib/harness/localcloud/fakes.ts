import type { FastifyReply, FastifyRequest } from 'fastify';
import { jsonBody, jsonError } from './aws-wire';
import type { Behaviour } from './behaviour';
import type { Chance } from './chance';
import { SsmModel, type CommandRecord } from './ssm-fake';
import { describeInstances } from './ssm-describe';

export type { CommandRecord };

/** Lightsail's instance states (the EC2 codes it reuses) that the local machines can be in. */
export const LIGHTSAIL_CODES = { pending: 0, running: 16, stopping: 64, stopped: 80 } as const;
export type LightsailState = keyof typeof LIGHTSAIL_CODES;

/**
 * What Lightsail reports for a machine (docs/aws-behaviour.md: lightsailStates): its power state,
 * whatever became of its OS, so a crashed or frozen VM reads `running`. With the behaviour off,
 * the kind old answer: `stopped` for any machine whose OS is down.
 */
export const lightsailView = (
  power: LightsailState,
  osUp: boolean,
  behaviour: Pick<Behaviour['lightsailStates'], 'on'>,
): LightsailState => (behaviour.on ? power : osUp ? 'running' : 'stopped');

/** One machine as AWS sees it. */
export interface MachineView {
  instanceId: string;
  name: string;
  lightsailName: string;
  /** What Lightsail reports: a crashed or frozen VM still reads `running`. */
  lightsailState: LightsailState;
  /** Its SSM Agent can take commands and ping: the OS runs, is not frozen, and reaches AWS. */
  reachable: boolean;
  /** The role its SSM registration holds (the node's own, from `fleet enroll`), when it has one. */
  iamRole?: string;
}

/** What the fakes need from the local fleet. */
export interface Machines {
  list(): MachineView[];
  /** Runs an allowed command on a reachable node; resolves when it finished. */
  run(instanceId: string, command: string): Promise<{ ok: boolean; output: string }>;
}

const DEFAULT_EXECUTION_TIMEOUT_S = 3600;

/**
 * Wire-level fakes of the SSM and Lightsail calls the project makes (awsJson 1.1) over the
 * local machines. SSM follows the real lifecycle (lib/harness/localcloud/ssm-fake.ts); Lightsail
 * reports what the machines' power state says. Only AWS-RunShellScript with allow-listed
 * commands runs; anything else fails like a command that does not exist on the node.
 */
export class AwsFakes {
  machines: Machines | null = null;
  readonly ssm: SsmModel;
  private readonly timer: NodeJS.Timeout;

  constructor(allowed: ReadonlySet<string>, behaviour: Pick<Behaviour, 'ssmRunCommand' | 'ssmPing'>, chance: Chance) {
    const view = (id: string): MachineView | undefined => this.machines?.list().find((m) => m.instanceId === id);
    this.ssm = new SsmModel(
      {
        exists: (id) => view(id) !== undefined,
        reachable: (id) => view(id)?.reachable === true,
        run: (id, command) => this.machines?.run(id, command) ?? Promise.resolve({ ok: false, output: 'no machines' }),
        nameOf: (id) => view(id)?.name ?? id,
      },
      behaviour,
      allowed,
      chance,
    );
    // Deliveries, pings and timeouts advance on their own, as on AWS.
    this.timer = setInterval(() => this.ssm.tick(), 20);
    this.timer.unref();
  }

  /** The commands the SSM fake was sent, for the drill's report. */
  get commands(): readonly CommandRecord[] {
    return this.ssm.commands;
  }

  /** Starts the SSM Agent's pings of each machine. */
  attach(machines: Machines): void {
    this.machines = machines;
    for (const m of machines.list()) this.ssm.register(m.instanceId);
  }

  stop(): void {
    clearInterval(this.timer);
  }

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
    if (service === 'AmazonSSM') this.ssmCall(action ?? '', body, principal, send, reply);
    else this.lightsail(action ?? '', body, send, reply);
  }

  private ssmCall(
    action: string,
    body: Record<string, unknown>,
    principal: string,
    send: (o: unknown) => void,
    reply: FastifyReply,
  ): void {
    switch (action) {
      case 'SendCommand': {
        const ids = (body.InstanceIds as string[] | undefined) ?? [];
        const params = (body.Parameters as Record<string, string[]> | undefined) ?? {};
        const commands = (params.commands ?? []).join('\n');
        if (body.DocumentName !== 'AWS-RunShellScript')
          return jsonError(reply, 400, 'InvalidDocument', `document ${String(body.DocumentName)} is not available`);
        if (ids.length !== 1) return jsonError(reply, 400, 'InvalidInstanceId', 'exactly one instance id is supported');
        const execution = Number(params.executionTimeout?.[0] ?? DEFAULT_EXECUTION_TIMEOUT_S);
        if (!Number.isInteger(execution) || execution < 1 || execution > 172_800)
          return jsonError(
            reply,
            400,
            'InvalidParameters',
            `executionTimeout ${String(params.executionTimeout?.[0])} is not within 1 and 172800`,
          );
        const sent = this.ssm.send(
          ids[0] ?? '',
          commands,
          principal,
          Number(body.TimeoutSeconds ?? 3600),
          execution,
          typeof body.Comment === 'string' ? body.Comment : '',
        );
        if (!sent.ok) return jsonError(reply, 400, sent.type, sent.message);
        return send({
          Command: {
            CommandId: sent.record.commandId,
            DocumentName: 'AWS-RunShellScript',
            InstanceIds: ids,
            Status: 'Pending',
          },
        });
      }
      case 'GetCommandInvocation': {
        const inv = this.ssm.get(String(body.CommandId), String(body.InstanceId));
        if (inv === null) return jsonError(reply, 400, 'InvocationDoesNotExist', 'no such invocation');
        return send({
          CommandId: inv.commandId,
          InstanceId: inv.instanceId,
          Status: inv.status,
          StatusDetails: inv.details,
          StandardOutputContent: '',
          StandardErrorContent: inv.status === 'Success' ? '' : inv.output,
        });
      }
      case 'ListCommands': {
        // Pages of MaxResults (default 50, as AWS), continued by the index as a NextToken.
        const all = this.ssm.list(typeof body.InstanceId === 'string' ? body.InstanceId : '');
        const start = Number(body.NextToken ?? 0);
        const size = Math.min(50, Math.max(1, Number(body.MaxResults ?? 50)));
        const page = all.slice(start, start + size);
        const next = start + size < all.length ? { NextToken: String(start + size) } : {};
        return send({
          Commands: page.map((c) => ({
            CommandId: c.commandId,
            Comment: c.comment,
            InstanceIds: [c.instanceId],
            DocumentName: 'AWS-RunShellScript',
            Status: c.status,
          })),
          ...next,
        });
      }
      case 'CancelCommand':
        if (!this.ssm.cancel(String(body.CommandId)))
          return jsonError(reply, 400, 'InvalidCommandId', 'no such command');
        return send({});
      case 'DescribeInstanceInformation':
        // SSM refuses a page size outside 5–50 (API reference, MaxResults); it does not clamp it.
        if (body.MaxResults !== undefined && !(Number(body.MaxResults) >= 5 && Number(body.MaxResults) <= 50))
          return jsonError(reply, 400, 'ValidationException', `MaxResults ${JSON.stringify(body.MaxResults)}: 5 to 50`);
        return send(
          describeInstances(this.machines?.list() ?? [], body, (id) => ({
            status: this.ssm.pingStatus(id),
            at: this.ssm.lastPingAt(id),
          })),
        );
      default:
        return jsonError(reply, 400, 'InvalidAction', `the local SSM fake does not implement ${action}`);
    }
  }

  private lightsail(
    action: string,
    body: Record<string, unknown>,
    send: (o: unknown) => void,
    reply: FastifyReply,
  ): void {
    const list = this.machines?.list() ?? [];
    const stateOf = (m: MachineView): { code: number; name: string } => ({
      code: LIGHTSAIL_CODES[m.lightsailState],
      name: m.lightsailState,
    });
    switch (action) {
      case 'GetInstanceState': {
        const found = list.find((m) => m.lightsailName === body.instanceName);
        if (found === undefined)
          return jsonError(reply, 400, 'NotFoundException', `instance ${String(body.instanceName)} not found`);
        return send({ state: stateOf(found) });
      }
      case 'GetInstances':
        return send({ instances: list.map((m) => ({ name: m.lightsailName, state: stateOf(m) })) });
      default:
        return jsonError(reply, 400, 'InvalidAction', `the local Lightsail fake does not implement ${action}`);
    }
  }
}
