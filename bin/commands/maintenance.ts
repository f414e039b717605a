import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import type { MaintenanceChange, Note } from '../../lib/core/fleet/maintenance';
import { durationMs, parseNode } from '../../lib/core/views/event-query';
import { changeMaintenance, type MaintenanceView } from '../../lib/ops/maintenance';
import { argument, connect, operator, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderMaintenance } from './render';

interface MaintenanceOptions extends TargetOptions {
  for?: number;
  reason?: string;
}

const parseFor = (raw: string): number => {
  const ms = durationMs(raw);
  if (ms === null) throw new ValidationError(`--for: must be a duration such as 30m, 2h or 1d, got "${raw}"`, '--for');
  return ms;
};

const noteOf = (o: MaintenanceOptions, at: number): Note => ({ at, by: operator(), reason: o.reason ?? null });

const run = async (o: MaintenanceOptions, change: (at: number) => MaintenanceChange): Promise<void> => {
  const { target, deps } = connect(o);
  const now = deps.now();
  const view: MaintenanceView = await changeMaintenance(deps, change(now));
  if (o.json === true) {
    printJson({ where: target.where, ...view });
    return;
  }
  const c = paint();
  const applied = view.changed ? ' (set now: the watchdog applies it at its next run)' : ' (unchanged)';
  console.log(`${c.bold(`Maintenance (${target.where})`)}${applied}`);
  for (const line of renderMaintenance(view.maintenance, now, c)) console.log(line);
};

const nodeArgument = argument((raw: string) => parseNode(raw, 'NODE'));

/** `fleet pause|resume|cordon|uncordon`: maintenance without false alarms. */
export const registerMaintenance = (program: Command): void => {
  withTargetOptions(
    program
      .command('pause')
      .description(
        'pause the automation: the watchdog still judges and alerts, but restarts nothing and fails nothing over, ' +
          'and no standby takes a lapsed lease, until fleet resume or the expiry',
      ),
  )
    .option('--for <duration>', 'end the pause by itself after this long (30m, 2h, 1d)', argument(parseFor))
    .option('--reason <text>', 'why, shown in status and in every alert meanwhile')
    .action((o: MaintenanceOptions) => run(o, (at) => ({ kind: 'pause', note: noteOf(o, at), forMs: o.for ?? null })));
  withTargetOptions(
    program.command('resume').description('end a pause: claims held meanwhile go on at the next watchdog run'),
  ).action((o: MaintenanceOptions) => run(o, () => ({ kind: 'resume' })));
  withTargetOptions(
    program
      .command('cordon')
      .description(
        'take a standby out of rotation for patching or a reboot: never promoted, ' +
          'and its silence and restarts are no incident',
      ),
  )
    .argument('<node>', 'the standby (node-N); the primary cannot be cordoned', nodeArgument)
    .option('--reason <text>', 'why, shown in status')
    .action((node: string, o: MaintenanceOptions) => run(o, (at) => ({ kind: 'cordon', node, note: noteOf(o, at) })));
  withTargetOptions(
    program
      .command('uncordon')
      .description('put a node back in rotation: judged by its samples again from the next watchdog run'),
  )
    .argument('<node>', 'the node (node-N)', nodeArgument)
    .action((node: string, o: MaintenanceOptions) => run(o, () => ({ kind: 'uncordon', node })));
};
