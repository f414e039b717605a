import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import { parseNode } from '../../lib/core/views/event-query';
import { manualFailover } from '../../lib/ops/manual-failover';
import { argument, connect, EXIT, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderFailover } from './render';

interface FailoverOptions extends TargetOptions {
  to: string;
  reason: string;
  force?: boolean;
}

const parseReason = (raw: string): string => {
  const reason = raw.trim();
  if (reason === '' || reason.length > 300)
    throw new ValidationError('--reason: must be 1 to 300 characters', '--reason');
  return reason;
};

/** `fleet failover --to NODE --reason TEXT [--force]`: moves the primary role by hand, as the watchdog would. */
export const registerFailover = (program: Command): void => {
  withTargetOptions(
    program
      .command('failover')
      .description(
        'move the primary role to a ready standby (stop old worker, promote by CAS, start new worker, move the record)',
      ),
  )
    .requiredOption(
      '--to <node>',
      'the standby to promote',
      argument((raw) => parseNode(raw, '--to')),
    )
    .requiredOption('--reason <text>', 'why: written to leader.json and the PROMOTED event', argument(parseReason))
    .option(
      '--force',
      'promote even when the node is not ready (stale heartbeat, no worker, behind the epoch, open incident)',
    )
    .action(async (o: FailoverOptions) => {
      const { target, deps } = connect(o);
      const result = await manualFailover(deps, { to: o.to, reason: o.reason, force: o.force === true });
      if (o.json === true) printJson({ where: target.where, ...result });
      else console.log(renderFailover(result, target.where, paint()));
      if (result.refused !== null) console.error(`fleet failover: refused: ${result.refused}`);
      process.exitCode = result.ok && !result.steps.some((s) => s.status === 'fail') ? EXIT.ok : EXIT.failed;
    });
};
