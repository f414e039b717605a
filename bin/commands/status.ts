import type { Command } from 'commander';
import { gatherStatus } from '../../lib/ops/status';
import { connect, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderStatus } from './render';

/** `fleet status [--local [file]] [--json]`: the fleet now, from leader.json, heartbeats and the watchdog's state. */
export const registerStatus = (program: Command): void => {
  withTargetOptions(
    program
      .command('status')
      .description('roles, heartbeats, stall counters, open incidents, queue depth and the last incident'),
  ).action(async (o: TargetOptions) => {
    const { target, deps } = connect(o);
    const view = await gatherStatus(deps);
    if (o.json === true) printJson({ where: target.where, ...view });
    else console.log(renderStatus(view, target.where, paint()));
  });
};
