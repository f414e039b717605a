import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import { parseNode } from '../../lib/core/views/event-query';
import { rejoinNode } from '../../lib/ops/rejoin';
import { argument, connect, EXIT, paint, printJson, withTargetOptions, type TargetOptions } from './common';
import { renderRejoinStep } from './render';

interface RejoinOptions extends TargetOptions {
  wait?: number;
}

const parseWait = (raw: string): number => {
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new ValidationError('--wait: must be a number of seconds from 1 to 3600', '--wait');
  return seconds;
};

/** `fleet rejoin NODE [--wait SECONDS]`: restarts a standby's worker in standby mode and waits for its self-test. */
export const registerRejoin = (program: Command): void => {
  withTargetOptions(
    program
      .command('rejoin')
      .description(
        'make a standby ready again: restart its worker in standby mode (fenced, never consuming), ' +
          "reset the watchdog's rejoin budget for it, and wait for its self-test",
      ),
  )
    .argument(
      '<node>',
      'the standby (node-N)',
      argument((raw) => parseNode(raw, 'NODE')),
    )
    .option('--wait <seconds>', 'how long to wait for the self-test (default: 6 sample intervals)', argument(parseWait))
    .action(async (node: string, o: RejoinOptions) => {
      const { target, deps } = connect(o);
      const c = paint();
      const waitMs = (o.wait ?? 6 * deps.config.sampleIntervalSeconds) * 1000;
      if (o.json !== true) console.log(c.bold(`Rejoin ${node} (${target.where})`));
      const result = await rejoinNode(deps, { node, waitMs }, (entry) => {
        if (o.json !== true) console.log(renderRejoinStep(entry, c));
      });
      if (o.json === true) printJson({ where: target.where, ...result });
      else if (result.ok) console.log(c.green(`${node} is a ready standby.`));
      if (result.refused !== null) console.error(`fleet rejoin: refused: ${result.refused}`);
      process.exitCode = result.ok ? EXIT.ok : EXIT.failed;
    });
};
