import type { NodeCommand, RunCommand } from '../../aws/run-command';

/** What a claimed restart sends (lib/control/watchdog/actions.ts sendCommand); a failover's stop is not struck. */
const RESTARTS: ReadonlySet<NodeCommand> = new Set(['restartWorker', 'restartAgent']);

/**
 * The `watchdog-crash` fault: while it lasts, a watchdog run dies between two of its writes, after
 * a restart's claim was stored and before its command is sent. The drill's watchdog sends its
 * commands through `wrap`: a restart sent then never settles (`hang`), so nothing more of that
 * run happens, and the scheduler ends the invocation at the function's timeout.
 */
export class WatchdogCrash {
  active = false;
  /** Runs that died so far. */
  struck = 0;

  constructor(
    /** Never settles; ends the invocation it is called from at its timeout (LocalScheduler.hang). */
    private readonly hang: () => Promise<never>,
    /** Told of every run that died, for the timeline. */
    private readonly onStrike: (instanceId: string, command: NodeCommand, comment: string) => void,
  ) {}

  /** `commands` as the drill's watchdog sees them: the same, but for a restart sent while the fault lasts. */
  wrap(commands: RunCommand): RunCommand {
    const send: RunCommand['send'] = (target, command, comment, timeoutSeconds) => {
      if (!this.active || !RESTARTS.has(command)) return commands.send(target, command, comment, timeoutSeconds);
      this.struck++;
      this.onStrike(target.instanceId ?? target.name, command, comment);
      return this.hang();
    };
    return new Proxy(commands, {
      get: (target, prop) => {
        if (prop === 'send') return send;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
