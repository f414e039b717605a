import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import { parseNode } from '../../lib/core/views/event-query';
import type { OpsDeps } from '../../lib/ops/observe';
import {
  cancelSwitchover,
  requestSwitchover,
  switchoverBoundMs,
  type SwitchoverResult,
  type SwitchoverStep,
} from '../../lib/ops/switchover';
import { argument, connect, EXIT, operator, paint, withTargetOptions, type Paint, type TargetOptions } from './common';
import { confirm, mustAsk } from './confirm';

export interface SwitchoverOptions extends TargetOptions {
  to?: string;
  reason?: string;
  ignoreReadiness?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  force?: boolean;
  wait?: boolean;
  cancel?: boolean;
}

/** Where the command talks to: a terminal to ask on (or not), and its two outputs. */
export interface SwitchoverIo {
  terminal: boolean;
  input: Readable;
  output: Writable;
  out: (text: string) => void;
  err: (text: string) => void;
}

const MARK: Record<SwitchoverStep['status'], (c: Paint) => string> = {
  ok: (c) => c.green('ok  '),
  warn: (c) => c.yellow('warn'),
  fail: (c) => c.red('FAIL'),
  skipped: (c) => c.dim('skip'),
};

/** `fleet switchover` for people: each step, then the outcome. */
export const renderSwitchover = (r: SwitchoverResult, where: string, c: Paint): string => {
  const how = `${r.overridden.length > 0 ? ', readiness ignored' : ''}${r.dryRun ? ', dry run' : ''}`;
  const lines = [c.bold(`Switchover from ${r.from ?? '?'} to ${r.to} (${where})${how}`)];
  for (const s of r.steps) lines.push(`${MARK[s.status](c)}  ${s.step.padEnd(10)} ${s.detail}`);
  if (r.dryRun && r.refused === null) lines.push('Dry run: nothing was changed.');
  return lines.join('\n');
};

/** `--to` and `--reason` (null with `--cancel`): checked before anything is read. */
const requireArgs = (o: SwitchoverOptions): { to: string; reason: string } | null => {
  if (o.cancel === true) return null;
  if (o.to === undefined || o.reason === undefined)
    throw new ValidationError('--to and --reason are required (or --cancel)', o.to === undefined ? '--to' : '--reason');
  return { to: o.to, reason: o.reason };
};

/**
 * The command's work, apart from commander and the process: checks, shows the steps and asks on a
 * terminal (as `fleet failover` does), records the request and waits for the handover.
 */
export const runSwitchover = async (
  deps: OpsDeps,
  where: string,
  o: SwitchoverOptions,
  io: SwitchoverIo,
): Promise<number> => {
  const args = requireArgs(o);
  if (args === null) {
    const r = await cancelSwitchover(deps);
    io.out(o.json === true ? JSON.stringify({ where, ...r }, null, 2) : r.detail);
    return r.cancelled === null ? EXIT.failed : EXIT.ok;
  }
  const request = { ...args, by: operator(), force: o.ignoreReadiness === true };
  const waitMs = o.wait === false ? 0 : switchoverBoundMs(deps.config);
  const c = paint();
  const yes = o.yes === true || o.force === true;
  if (mustAsk({ terminal: io.terminal, yes, dryRun: o.dryRun === true, json: o.json === true })) {
    const plan = await requestSwitchover(deps, { ...request, dryRun: true, waitMs: 0 });
    io.out(renderSwitchover(plan, where, c));
    if (plan.refused !== null) {
      io.err(`fleet switchover: refused: ${plan.refused}`);
      return EXIT.failed;
    }
    const question = `Hand the primary role over from ${plan.from ?? '?'} to ${args.to}? [y/N] `;
    if (!(await confirm(question, io.input, io.output))) {
      io.err('fleet switchover: not confirmed: nothing changed');
      return EXIT.failed;
    }
  }
  const result = await requestSwitchover(deps, { ...request, dryRun: o.dryRun === true, waitMs });
  io.out(o.json === true ? JSON.stringify({ where, ...result }, null, 2) : renderSwitchover(result, where, c));
  if (result.refused !== null) io.err(`fleet switchover: refused: ${result.refused}`);
  const failed = result.refused !== null || result.steps.some((s) => s.status === 'fail');
  return (result.ok || result.dryRun) && !failed ? EXIT.ok : EXIT.failed;
};

const parseReason = (raw: string): string => {
  const reason = raw.trim();
  if (reason === '' || reason.length > 300)
    throw new ValidationError('--reason: must be 1 to 300 characters', '--reason');
  return reason;
};

/** `fleet switchover --to NODE --reason TEXT`: a planned handover of the primary role, drained to checkpoints. */
export const registerSwitchover = (program: Command): void => {
  withTargetOptions(
    program
      .command('switchover')
      .description('hand the primary role to a ready standby: the primary drains to checkpoints and hands over'),
  )
    .option(
      '--to <node>',
      'the standby to hand the role to',
      argument((raw) => parseNode(raw, '--to')),
    )
    .option('--reason <text>', 'why: written to leader.json with the request', argument(parseReason))
    .option('--dry-run', 'check the target and show the steps; change nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--force', 'do not ask for confirmation (as patronictl --force); readiness still holds')
    .option('--ignore-readiness', 'hand over even when the node is not ready (never while paused or cordoned)')
    .option('--no-wait', 'record the request and return, without waiting for the handover')
    .option('--cancel', 'withdraw a pending request; the primary carries on')
    .action(async (o: SwitchoverOptions) => {
      requireArgs(o);
      const { target, deps } = connect(o);
      const io: SwitchoverIo = {
        terminal: process.stdin.isTTY === true && process.stdout.isTTY === true,
        input: process.stdin,
        output: process.stdout,
        out: (text) => console.log(text),
        err: (text) => console.error(text),
      };
      process.exitCode = await runSwitchover(deps, target.where, o, io);
    });
};
