import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import type { AdmissionMode } from '../../lib/core/fleet/admission';
import { admission } from '../../lib/ops/admission';
import { connect, EXIT, paint, printJson, when, withTargetOptions, type TargetOptions } from './common';

interface AdmissionOptions extends TargetOptions {
  hold?: boolean;
  open?: boolean;
  auto?: boolean;
}

/** The one mode the flags ask for, or null to only show; two at once is bad input. */
export const modeOf = (o: Pick<AdmissionOptions, 'hold' | 'open' | 'auto'>): AdmissionMode | null => {
  const asked = (['hold', 'open', 'auto'] as const).filter((m) => o[m] === true);
  if (asked.length > 1)
    throw new ValidationError(
      `fleet admission: choose one of --hold, --open, --auto (got ${asked.map((m) => `--${m}`).join(' ')})`,
      `--${asked[1]}`,
    );
  return asked[0] ?? null;
};

/** `fleet admission [--hold|--open|--auto]`: whether intake input is held, and the operator's override. */
export const registerAdmission = (program: Command): void => {
  withTargetOptions(
    program
      .command('admission')
      .description(
        'show whether input from the intake queue is held (backpressure); ' +
          '--hold or --open overrides the watchdog, --auto gives the decision back',
      ),
  )
    .option('--hold', 'hold input: the watchdog admits nothing until --open or --auto')
    .option('--open', 'admit input whatever the fleet looks like (still never above the high mark)')
    .option(
      '--auto',
      'the watchdog decides: held during a failover, or with no ready standby at the high mark, until the low mark',
    )
    .action(async (o: AdmissionOptions) => {
      let mode: AdmissionMode | null;
      try {
        mode = modeOf(o);
      } catch (error) {
        console.error((error as Error).message);
        process.exitCode = EXIT.badInput;
        return;
      }
      const { target, deps } = connect(o);
      const view = await admission(deps, mode);
      if (o.json === true) {
        printJson({ where: target.where, ...view });
        return;
      }
      const c = paint();
      const now = deps.now();
      const state = view.held ? c.yellow(`held${view.reason === null ? '' : `: ${view.reason}`}`) : c.green('open');
      console.log(
        `${c.bold(`Admission (${target.where})`)}  mode ${view.mode}` +
          (view.changed ? ' (set now: the watchdog applies it at its next run)' : ''),
      );
      console.log(`  input   ${state}${view.since === null ? '' : `, since ${when(view.since, now)}`}`);
      if (view.depths === null)
        console.log('  queues  no intake queue configured (intakeQueueUrl): producers send to the task queue directly');
      else if ('error' in view.depths) console.log(`  queues  unreadable: ${view.depths.error}`);
      else
        console.log(
          `  queues  task queue ${view.depths.backlog} ` +
            `(high mark ${deps.config.admissionHighMark}, low mark ${deps.config.admissionLowMark}), ` +
            `intake ${view.depths.intake} waiting`,
        );
    });
};
