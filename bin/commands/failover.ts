import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import { parseNode } from '../../lib/core/views/event-query';
import { manualFailover } from '../../lib/ops/manual-failover';
import { argument, connect, EXIT, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { confirm, mustAsk } from './confirm';
import { renderFailover } from './render';

interface FailoverOptions extends TargetOptions {
  to: string;
  reason: string;
  ignoreReadiness?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  force?: boolean;
}

const parseReason = (raw: string): string => {
  const reason = raw.trim();
  if (reason === '' || reason.length > 300)
    throw new ValidationError('--reason: must be 1 to 300 characters', '--reason');
  return reason;
};

/** `fleet failover --to NODE --reason TEXT`: moves the primary role by hand, as the watchdog would. */
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
    .option('--dry-run', 'check the target and show the steps; change nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'do not ask for confirmation (as patronictl --force); readiness still holds')
    .option(
      '--ignore-readiness',
      'promote even when the node is not ready (stale heartbeat, no worker, behind the epoch, open incident)',
    )
    .action(async (o: FailoverOptions) => {
      const { target, deps } = connect(o);
      const request = { to: o.to, reason: o.reason, force: o.ignoreReadiness === true };
      const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
      const yes = o.yes === true || o.force === true;
      if (mustAsk({ terminal, yes, dryRun: o.dryRun === true, json: o.json === true })) {
        const plan = await manualFailover(deps, { ...request, dryRun: true });
        console.log(renderFailover(plan, target.where, paint()));
        const question = `Move the primary role from ${plan.from ?? '?'} to ${o.to}? [y/N] `;
        if (plan.refused === null && !(await confirm(question, process.stdin, process.stdout))) {
          console.error('fleet failover: not confirmed: nothing changed');
          process.exitCode = EXIT.failed;
          return;
        }
        if (plan.refused !== null) {
          console.error(`fleet failover: refused: ${plan.refused}`);
          process.exitCode = EXIT.failed;
          return;
        }
      }
      const result = await manualFailover(deps, { ...request, dryRun: o.dryRun === true });
      if (o.json === true) printJson({ where: target.where, ...result });
      else console.log(renderFailover(result, target.where, paint()));
      if (result.refused !== null) console.error(`fleet failover: refused: ${result.refused}`);
      const failed = result.refused !== null || result.steps.some((s) => s.status === 'fail');
      process.exitCode = (result.ok || result.dryRun) && !failed ? EXIT.ok : EXIT.failed;
    });
};
