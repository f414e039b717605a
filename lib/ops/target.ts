import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../config';
import { ClientFactory } from '../aws/clients';
import type { Config } from '../core/config';
import { ValidationError } from '../core/errors';
import { parseJsonText, parseWith } from '../core/validate';

/**
 * Where a running drill or demo tells operator commands how to reach its local cloud. In the
 * temp dir, so `npm start` in one terminal and `fleet status --local` in another meet; one
 * file per user, so a shared /tmp does not mix two people's fleets.
 */
export const defaultLocalFile = (): string => join(tmpdir(), `queens-fleet-local-${process.getuid?.() ?? 'user'}.json`);

const localInfoSchema = z.strictObject({
  pid: z.number().int().positive(),
  endpoint: z.url(),
  region: z.string().min(1),
  configFile: z.string().min(1),
  scenario: z.string(),
  startedAt: z.number(),
});
export type LocalInfo = z.output<typeof localInfoSchema>;

/** Publishes a running local fleet (atomically: written aside, then renamed). */
export const announceLocal = (info: LocalInfo, file = defaultLocalFile()): void => {
  const aside = `${file}.${process.pid}.tmp`;
  rmSync(aside, { force: true });
  // Created fresh (never through a planted link) and readable by this user only; the rename
  // replaces whatever sits at the final name, a link included, without following it.
  writeFileSync(aside, `${JSON.stringify(info, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  renameSync(aside, file);
};

/** Withdraws the announcement, only if it is still this process's own. */
export const withdrawLocal = (file = defaultLocalFile()): void => {
  try {
    const current = localInfoSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (current.success && current.data.pid === process.pid) rmSync(file, { force: true });
  } catch {
    // Gone already, or unreadable: not ours to remove.
  }
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Reads and checks the announcement of a running local fleet. */
export const readLocal = (file = defaultLocalFile()): LocalInfo => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ValidationError(
      `no local fleet is running (${file} not found): start one with \`npm start\` or \`fleet drill … --hold\``,
      '--local',
    );
  }
  const info = parseWith(localInfoSchema, parseJsonText(text, file), file);
  if (!alive(info.pid))
    throw new ValidationError(
      `the local fleet in ${file} is gone (process ${info.pid} has exited): start a new one`,
      '--local',
    );
  return info;
};

/** What operator commands act on: a configuration and the clients to reach it. */
export interface Target {
  config: Config;
  clients: ClientFactory;
  /** "aws" or "local (scenario)": shown in human output. */
  where: string;
}

/**
 * The fleet operator commands talk to: the local cloud of a running drill (`--local`, or
 * `--local FILE`), or AWS with the configuration from --config or FLEET_CONFIG_FILE and FLEET_* variables
 * and credentials from the SDK's usual chain.
 */
export const openTarget = (
  local: string | boolean | undefined,
  env: NodeJS.ProcessEnv = process.env,
  /** The CLI's `--config FILE`, which wins over FLEET_CONFIG_FILE (and that over ./fleet-config.json). */
  configFile?: string,
): Target => {
  if (local === undefined || local === false) {
    const config = loadConfig(env, configFile, true);
    return { config, clients: new ClientFactory({ region: config.region }, env), where: 'aws' };
  }
  const info = readLocal(local === true ? defaultLocalFile() : local);
  const config = loadConfig({ FLEET_CONFIG_FILE: info.configFile });
  const clients = new ClientFactory(
    {
      region: info.region,
      endpoint: info.endpoint,
      credentials: { accessKeyId: 'operator', secretAccessKey: 'local' },
    },
    {},
  );
  return { config, clients, where: `local (${info.scenario})` };
};
