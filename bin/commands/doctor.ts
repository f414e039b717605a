import type { Command } from 'commander';
import { configFailure, doctorPassed } from '../../lib/core/views/doctor';
import type { Check } from '../../lib/core/views/doctor-checks';
import { ValidationError } from '../../lib/core/errors';
import { runDoctor } from '../../lib/ops/doctor';
import { defaultLocalFile, readLocal } from '../../lib/ops/target';
import { connect, EXIT, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderDoctor } from './render';

/** The checks, or the one failed config check when the configuration does not load. */
const diagnose = async (o: TargetOptions): Promise<{ where: string; checks: Check[] }> => {
  const local = o.local === undefined || o.local === false ? null : o.local === true ? defaultLocalFile() : o.local;
  // A wrong --local is a bad argument (exit 2); a bad configuration is what doctor reports.
  if (local !== null) readLocal(local);
  let opened: ReturnType<typeof connect>;
  try {
    opened = connect(o);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { where: local === null ? 'aws' : 'local', checks: [configFailure(error.message)] };
  }
  return { where: opened.target.where, checks: await runDoctor(opened.deps) };
};

/** `fleet doctor`: configuration, bucket, leader, heartbeats, queue, topic, SSM, DNS; exit 1 when a check fails. */
export const registerDoctor = (program: Command): void => {
  withTargetOptions(
    program
      .command('doctor')
      .description(
        'check configuration, state bucket, leader, heartbeats, queue, topic, SSM registration and the origin record',
      ),
  ).action(async (o: TargetOptions) => {
    const { where, checks } = await diagnose(o);
    const ok = doctorPassed(checks);
    if (o.json === true) printJson({ where, ok, checks });
    else console.log(renderDoctor(checks, where, paint()));
    process.exitCode = ok ? EXIT.ok : EXIT.failed;
  });
};
