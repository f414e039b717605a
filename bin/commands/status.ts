import type { Command } from 'commander';
import { gatherStatus } from '../../lib/ops/status';
import { argument, connect, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderStatus } from './render';
import { parseInterval, watch } from './watch';

interface StatusOptions extends TargetOptions {
  watch?: number;
}

/** `fleet status [--local] [--json] [--watch SECONDS]`: the fleet now, from the lease, heartbeats and watchdog. */
export const registerStatus = (program: Command): void => {
  withTargetOptions(
    program
      .command('status')
      .description('roles, heartbeats, stall counters, open incidents, queue depth and the last incident'),
  )
    .option('--watch <seconds>', 'show it again every SECONDS until Ctrl-C', argument(parseInterval))
    .action(async (o: StatusOptions) => {
      const { target, deps } = connect(o);
      if (o.watch === undefined) {
        const view = await gatherStatus(deps);
        if (o.json === true) printJson({ where: target.where, ...view });
        else console.log(renderStatus(view, target.where, paint()));
        return;
      }
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      // JSON rounds are one line each (NDJSON), for a reader that follows the stream.
      const render = async (): Promise<string> => {
        const view = await gatherStatus(deps);
        return o.json === true
          ? JSON.stringify({ where: target.where, ...view })
          : `${renderStatus(view, target.where, paint())}\n(every ${o.watch} s; Ctrl-C stops)`;
      };
      const terminal = process.stdout.isTTY === true && o.json !== true;
      const write = (text: string): void => void process.stdout.write(text);
      await watch(render, { everyMs: (o.watch ?? 5) * 1000, terminal, signal: stop.signal, write });
    });
};
