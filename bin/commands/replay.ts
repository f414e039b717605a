import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ValidationError } from '../../lib/core/errors';
import { parseReplayRequest, type ReplayRequest } from '../../lib/core/views/replay-input';
import { describePlan } from '../../lib/core/views/replay-text';
import { parseJsonText } from '../../lib/core/validate';
import { runReplay } from '../../lib/control/replay/run';
import { connect, EXIT, printJson, withTargetOptions, type TargetOptions } from './common';

interface ReplayOptions extends TargetOptions {
  file?: string;
  execute?: boolean;
}

/** The request from an event id or a file holding anything the replay function accepts. */
const requestOf = (eventId: string | undefined, o: ReplayOptions): ReplayRequest => {
  if ((eventId === undefined) === (o.file === undefined))
    throw new ValidationError('replay: give an event id or --file FILE (one of them)', 'eventId');
  const input: unknown =
    eventId !== undefined ? { eventId } : parseJsonText(readText(o.file ?? ''), `--file ${o.file ?? ''}`);
  const request = parseReplayRequest(input);
  // Only the flag acts from a terminal: a file copied from the console's execute sample must not.
  if (request.execute && o.execute !== true)
    throw new ValidationError(
      `--file ${o.file ?? ''} asks for "execute": true; ` +
        'the CLI acts only with --execute (or drop the key for a dry run)',
      '--execute',
    );
  return { ...request, execute: o.execute === true };
};

const readText = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ValidationError(
      `--file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      '--file',
    );
  }
};

/** `fleet replay`: what the replay function does, from a terminal. */
export const registerReplay = (program: Command): void => {
  const cmd = program
    .command('replay')
    .description(
      'show the plan of an incident from one of its events; with --execute, resume it (idempotent, epoch-guarded)',
    )
    .argument('[eventId]', 'an event id such as node-1-e3-i1.STALLED (see `fleet events`)')
    .option('--file <file>', 'a JSON file: an event object, an alert as published, or { "eventId": … }')
    .option('--execute', 'carry out the resuming step (default: a dry run that changes nothing)');
  withTargetOptions(cmd).action(async (eventId: string | undefined, o: ReplayOptions) => {
    const request = requestOf(eventId, o);
    const { target, deps } = connect(o);
    try {
      const result = await runReplay(deps, request);
      if (o.json === true) printJson(result);
      else
        for (const line of [...describePlan(result.plan, result.mode), ...result.executed.map((e) => `done: ${e}`)])
          console.log(line);
      // An execute that was refused, or whose step was taken up by someone else meanwhile, did not do what was asked.
      const didNot =
        result.mode === 'execute' &&
        (result.plan.verdict === 'refused' || (result.plan.action !== null && !result.acted));
      process.exitCode = didNot ? EXIT.failed : EXIT.ok;
    } finally {
      target.clients.destroy();
    }
  });
};
