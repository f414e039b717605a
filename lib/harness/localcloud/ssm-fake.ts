import { randomUUID } from 'node:crypto';
import type { Behaviour } from './behaviour';
import type { Chance } from './chance';

/** What the SSM fake needs from the machines: who exists, who can be reached, what runs there. */
export interface SsmHost {
  exists(instanceId: string): boolean;
  /** The node runs, is not frozen, and can reach AWS: its SSM Agent can take a command and ping. */
  reachable(instanceId: string): boolean;
  /** Runs an allowed command on a reachable node; resolves when it finished (never, if the node dies meanwhile). */
  run(instanceId: string, command: string): Promise<{ ok: boolean; output: string }>;
  nameOf(instanceId: string): string;
}

/** SSM's status words (GetCommandInvocation `Status`). */
export type SsmStatus =
  'Pending' | 'InProgress' | 'Delayed' | 'Success' | 'Failed' | 'TimedOut' | 'Cancelled' | 'Cancelling';

/** One command invocation, as the drill's recorder reads it too. */
export interface CommandRecord {
  commandId: string;
  instanceId: string;
  command: string;
  principal: string;
  /** The command's Comment (the fleet writes `queen-fleet <incident id>`). */
  comment: string;
  status: SsmStatus;
  /** StatusDetails: Delivery Timed Out, Execution Timed Out, Undeliverable, … */
  details: string;
  output: string;
  /** The command was allowed (an allow-listed fixed string). */
  allowed: boolean;
  /** Wall ms (the local clock): sent, visible to GetCommandInvocation, started on the node, finished. */
  requestedAt: number;
  visibleAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Delivery is possible until this; the invocation is final (TimedOut) at `expiresAt` at the latest. */
  deliverBy: number;
  expiresAt: number;
  /** Earliest time the agent can take it (delivery latency). */
  deliverAfter: number;
  cancelRequested: boolean;
  /** True once it finished successfully (for reports): null while not final. */
  ok: boolean | null;
}

const FINAL: ReadonlySet<SsmStatus> = new Set(['Success', 'Failed', 'TimedOut', 'Cancelled']);

export type SendResult = { ok: true; record: CommandRecord } | { ok: false; type: string; message: string };

/**
 * SSM Run Command and the SSM Agent's pings, as AWS documents them (docs/aws-behaviour.md:
 * ssmRunCommand, ssmPing), over the local machines. Time comes from `now`, randomness from
 * `chance`; `tick` advances deliveries and timeouts.
 */
export class SsmModel {
  readonly commands: CommandRecord[] = [];
  private readonly byKey = new Map<string, CommandRecord>();
  private readonly lastPing = new Map<string, number>();
  private readonly nextPing = new Map<string, number>();
  private readonly wasReachable = new Map<string, boolean>();
  onDone: ((record: CommandRecord) => void) | undefined;

  constructor(
    private readonly host: SsmHost,
    private readonly behaviour: Pick<Behaviour, 'ssmRunCommand' | 'ssmPing'>,
    private readonly allowed: ReadonlySet<string>,
    private readonly chance: Chance,
    private readonly now: () => number = Date.now,
  ) {}

  private get run(): Behaviour['ssmRunCommand'] {
    return this.behaviour.ssmRunCommand;
  }

  /** SendCommand for one instance. */
  send(
    instanceId: string,
    command: string,
    principal: string,
    timeoutSeconds: number,
    executionTimeoutSeconds: number,
    comment = '',
  ): SendResult {
    if (!this.host.exists(instanceId))
      return { ok: false, type: 'InvalidInstanceId', message: `${instanceId} is not a managed instance` };
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 30 || timeoutSeconds > 2_592_000)
      return {
        ok: false,
        type: 'InvalidParameters',
        message: `TimeoutSeconds ${timeoutSeconds} is not within 30 and 2592000`,
      };
    const now = this.now();
    const r = this.run;
    const hidden = !r.on
      ? 0
      : this.chance.chance(r.invisibleTailShare)
        ? this.chance.between(0, r.invisibleTailMaxMs)
        : this.chance.between(0, r.invisibleMaxMs);
    const record: CommandRecord = {
      commandId: randomUUID(),
      instanceId,
      command,
      principal,
      comment,
      status: 'Pending',
      details: 'Pending',
      output: '',
      allowed: this.allowed.has(command),
      requestedAt: now,
      visibleAt: now + hidden,
      startedAt: null,
      finishedAt: null,
      deliverBy: now + timeoutSeconds * 1000,
      expiresAt: now + (timeoutSeconds + executionTimeoutSeconds) * 1000,
      deliverAfter: now + (r.on ? this.chance.between(r.deliveryMinMs, r.deliveryMaxMs) : 0),
      cancelRequested: false,
      ok: null,
    };
    this.commands.push(record);
    this.byKey.set(`${record.commandId}/${instanceId}`, record);
    this.tick();
    return { ok: true, record };
  }

  /** GetCommandInvocation: the invocation, or null (InvocationDoesNotExist), also for a moment after SendCommand. */
  get(commandId: string, instanceId: string): CommandRecord | null {
    this.tick();
    const record = this.byKey.get(`${commandId}/${instanceId}`);
    return record === undefined || this.now() < record.visibleAt ? null : record;
  }

  /**
   * ListCommands for one instance, newest first. A command is listed from when it is visible to
   * GetCommandInvocation: AWS does not say ListCommands is quicker, so the fake is no kinder.
   */
  list(instanceId: string): CommandRecord[] {
    this.tick();
    return this.commands.filter((c) => c.instanceId === instanceId && this.now() >= c.visibleAt).reverse();
  }

  /** CancelCommand: a waiting invocation never runs; one in progress is Cancelling until its script ends. */
  cancel(commandId: string): boolean {
    const found = this.commands.filter((c) => c.commandId === commandId);
    for (const c of found) {
      if (FINAL.has(c.status)) continue;
      c.cancelRequested = true;
      if (c.status === 'InProgress') this.set(c, 'Cancelling', 'Cancelling');
      else this.finish(c, 'Cancelled', 'Cancelled', false);
    }
    return found.length > 0;
  }

  /** When the instance's SSM agent last pinged (this process's clock, ms), or null before its first. */
  lastPingAt(instanceId: string): number | null {
    this.tick();
    return this.lastPing.get(instanceId) ?? null;
  }

  /** PingStatus of each known instance. */
  pingStatus(instanceId: string): 'Online' | 'ConnectionLost' {
    this.tick();
    const p = this.behaviour.ssmPing;
    if (!p.on) return this.host.reachable(instanceId) ? 'Online' : 'ConnectionLost';
    const last = this.lastPing.get(instanceId) ?? this.now();
    return this.now() - last < p.lostAfterMs ? 'Online' : 'ConnectionLost';
  }

  private set(c: CommandRecord, status: SsmStatus, details: string): void {
    c.status = status;
    c.details = details;
  }

  private finish(c: CommandRecord, status: SsmStatus, details: string, ok: boolean, output = ''): void {
    if (FINAL.has(c.status)) return;
    this.set(c, status, details);
    c.output = output;
    c.ok = ok;
    c.finishedAt = this.now();
    this.onDone?.(c);
  }

  private start(c: CommandRecord): void {
    c.startedAt = this.now();
    this.set(c, 'InProgress', 'InProgress');
    if (!c.allowed) {
      this.finish(c, 'Failed', 'Failed', false, `command not allowed on this node: ${c.command.slice(0, 80)}`);
      return;
    }
    this.host.run(c.instanceId, c.command).then(
      (r) =>
        c.cancelRequested
          ? this.finish(c, 'Cancelled', 'Cancelled', false, r.output)
          : this.finish(c, r.ok ? 'Success' : 'Failed', r.ok ? 'Success' : 'Failed', r.ok, r.output),
      (error: unknown) => this.finish(c, 'Failed', 'Failed', false, String(error)),
    );
  }

  private pings(now: number): void {
    const p = this.behaviour.ssmPing;
    for (const [id, next] of [...this.nextPing.entries()]) {
      const reachable = this.host.reachable(id);
      if (reachable && this.wasReachable.get(id) === false) {
        // Back from an outage: the agent's next ping comes at some point within an interval.
        this.nextPing.set(id, now + this.chance.between(0, p.intervalMs));
      } else if (reachable && now >= next) {
        this.lastPing.set(id, now);
        this.nextPing.set(id, now + p.intervalMs);
      }
      this.wasReachable.set(id, reachable);
    }
  }

  /** Registers an instance's agent (it pinged when it registered). */
  register(instanceId: string): void {
    const now = this.now();
    this.lastPing.set(instanceId, now);
    this.nextPing.set(instanceId, now + this.chance.between(0, this.behaviour.ssmPing.intervalMs));
    this.wasReachable.set(instanceId, true);
  }

  /** Advances deliveries, pings and timeouts to now. */
  tick(): void {
    const now = this.now();
    this.pings(now);
    for (const c of this.commands) {
      if (FINAL.has(c.status)) continue;
      if (c.status === 'InProgress' || c.status === 'Cancelling') {
        if (c.startedAt !== null && now >= c.expiresAt)
          this.finish(c, 'TimedOut', 'ExecutionTimedOut', false, 'the node never reported the end of the command');
        continue;
      }
      const reachable = this.host.reachable(c.instanceId);
      if (!this.run.on && !reachable) {
        this.finish(c, 'Failed', 'Undeliverable', false, 'instance unreachable');
        continue;
      }
      if (reachable && now >= c.deliverAfter && now < c.deliverBy) {
        this.start(c);
        continue;
      }
      if (now >= c.expiresAt)
        this.finish(c, 'TimedOut', 'DeliveryTimedOut', false, 'the command was not delivered before its timeout');
      else if (!reachable && c.status === 'Pending' && now - c.requestedAt >= this.run.delayedAfterMs)
        this.set(c, 'Delayed', 'Delayed');
    }
  }
}
