import type { Command } from 'commander';
import { loadConfigWithSources } from '../../lib/config';
import { describeSource, sourcesCheck } from '../../lib/core/views/config-sources';
import { configFailure, doctorPassed } from '../../lib/core/views/doctor';
import type { Check } from '../../lib/core/views/doctor-checks';
import { ValidationError } from '../../lib/core/errors';
import { runDoctor } from '../../lib/ops/doctor';
import { defaultLocalFile, readLocal } from '../../lib/ops/target';
import { configFlag, connect, EXIT, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderDoctor } from './render';

type Sources = Record<string, string>;

/** Where each value came from, on AWS only: a local fleet's config is the drill's own. */
const sourcesOf = (): { check: Check; sources: Sources } => {
  const { sources, file } = loadConfigWithSources(process.env, configFlag.file, true);
  const described = Object.entries(sources).map(([key, s]) => [key, describeSource(s, file)]);
  return { check: sourcesCheck(sources, file), sources: Object.fromEntries(described) as Sources };
};

/** The checks, or the one failed config check when the configuration does not load. */
const diagnose = async (o: TargetOptions): Promise<{ where: string; checks: Check[]; sources?: Sources }> => {
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
  const checks = await runDoctor(opened.deps);
  if (local !== null) return { where: opened.target.where, checks };
  const { check, sources } = sourcesOf();
  return {
    where: opened.target.where,
    checks: [checks[0], check, ...checks.slice(1)].flatMap((c) => c ?? []),
    sources,
  };
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
    const { where, checks, sources } = await diagnose(o);
    const ok = doctorPassed(checks);
    if (o.json === true) printJson({ where, ok, checks, ...(sources === undefined ? {} : { sources }) });
    else console.log(renderDoctor(checks, where, paint()));
    process.exitCode = ok ? EXIT.ok : EXIT.failed;
  });
};
