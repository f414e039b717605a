import { hostname, userInfo } from 'node:os';
import Table from 'cli-table3';
import { InvalidArgumentError, type Command } from 'commander';
import pc from 'picocolors';
import { ValidationError } from '../../lib/core/errors';
import { createLogger } from '../../lib/log';
import { opsDeps, type OpsDeps } from '../../lib/ops/observe';
import { defaultLocalFile, openTarget, type Target } from '../../lib/ops/target';

/** The CLI's exit codes, as in bin/fleet.ts. */
export const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

/** Who acts, as a request or a note records it: `user@host`, or the host alone with no user entry (containers). */
export const operator = (): string => {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return hostname();
  }
};

/** The global `--config FILE` (bin/commands/index.ts): the config file, before FLEET_CONFIG_FILE. */
export const configFlag: { file?: string } = {};

/** The options every operator command takes. */
export interface TargetOptions {
  local?: boolean;
  localFile?: string;
  json?: boolean;
}

/**
 * Adds `--local`, `--local-file FILE` and `--json` to a command. Not `--local [file]`: an
 * optional option-argument would swallow the positional after it (`replay --local ID`).
 */
export const withTargetOptions = (cmd: Command): Command =>
  cmd
    .option(
      '--local',
      'act on the running local fleet (npm start, fleet drill --hold); ' +
        'without it, on AWS with --config / FLEET_CONFIG_FILE and FLEET_* settings',
    )
    .option('--local-file <file>', `the local fleet announced in FILE (default ${defaultLocalFile()}); implies --local`)
    .option('--json', 'print one JSON document on stdout');

/** The target a command's options name. */
export const targetOf = (o: TargetOptions): Target => openTarget(o.localFile ?? o.local, process.env, configFlag.file);

/**
 * Opens the target and builds its adapters. The log (JSON lines on stderr) shows errors only
 * unless LOG_LEVEL says otherwise: the commands report every step themselves.
 */
export const connect = (o: TargetOptions): { target: Target; deps: OpsDeps } => {
  const target = targetOf(o);
  const log = createLogger('fleet').child({}, { level: process.env.LOG_LEVEL ?? 'error' });
  return { target, deps: opsDeps(target, log) };
};

/** Wraps a core parser so its ValidationError becomes commander's: reported with the option's name, exit 2. */
export const argument =
  <T>(parse: (raw: string) => T) =>
  (raw: string): T => {
    try {
      return parse(raw);
    } catch (error) {
      if (error instanceof ValidationError) throw new InvalidArgumentError(error.message.replace(/^--[a-z-]+: /, ''));
      throw error;
    }
  };

export const printJson = (doc: unknown): void => {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
};

export type Paint = ReturnType<typeof pc.createColors>;

/** Colours only for a terminal (and not under NO_COLOR): piped output stays plain. */
export const paint = (): Paint => pc.createColors(process.stdout.isTTY === true && process.env.NO_COLOR === undefined);

/** A plain table: cli-table3's own colours off, cells coloured by the caller. */
export const table = (head: string[], rows: string[][], colWidths?: (number | null)[]): string => {
  const t = new Table({
    head,
    style: { head: [], border: [] },
    wordWrap: true,
    ...(colWidths === undefined ? {} : { colWidths }),
  });
  t.push(...rows);
  return t.toString();
};

/** `2025-01-31T12:00:00Z (3 min ago)`. */
export const when = (at: number | null, now: number): string => {
  if (at === null) return 'never';
  const s = Math.round((now - at) / 1000);
  const ago =
    Math.abs(s) < 120
      ? `${s} s`
      : Math.abs(s) < 7200
        ? `${Math.round(s / 60)} min`
        : Math.abs(s) < 172_800
          ? `${Math.round(s / 3600)} h`
          : `${Math.round(s / 86_400)} d`;
  // A stored time may be any finite number: one outside the Date range prints as it is.
  const date = new Date(at);
  return `${Number.isNaN(date.getTime()) ? String(at) : date.toISOString().replace(/\.\d{3}Z$/, 'Z')} (${ago} ago)`;
};
