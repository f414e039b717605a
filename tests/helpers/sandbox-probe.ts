import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Runs inside the node container as a copy of a queen-fleet unit that differs only in its
 * ExecStart (tests/helpers/systemd-node.ts derives it), so it lives in exactly the unit's
 * sandbox. It tries what a daemon needs (read the credentials, write the data directory) and
 * what it must not be able to do (write anywhere else), and leaves what happened in the data
 * directory for the test to judge. It exits 0 whatever it found: the test decides.
 * Usage: node probe.js NAME
 */

/** Where the daemons must not write; each is tried with a new file. */
export const FORBIDDEN = [
  '/',
  '/etc',
  '/etc/queen-fleet',
  '/etc/systemd/system',
  '/opt/queen-fleet',
  '/usr/local',
  '/var/lib',
  '/var/log',
  '/run',
  '/run/systemd/system',
  '/srv',
  '/root/.aws',
] as const;

/**
 * Where the unit has a file system of its own (PrivateTmp=, ProtectHome=tmpfs): a write may
 * succeed (systemd before 257 mounts ProtectHome's tmpfs read-write), but never reaches the
 * machine's directory; the test checks that.
 */
export const PRIVATE = ['/tmp', '/var/tmp', '/root', '/home'] as const;

/** What the probe found, as written to `/var/queen-fleet/<marker>.json`. */
export interface ProbeResult {
  uid: number;
  /** The credentials file's content, or the error code reading it. */
  credentials: { ok: true; text: string } | { ok: false; code: string };
  /** What is visible in root's home. */
  home: string[];
  /** Writing (and removing) a file in the data directory: 'ok' or the error code. */
  dataDir: string;
  /** Each private directory: 'ok' or the error code (the file's name is `marker`). */
  private: Record<string, string>;
  /** Each forbidden directory: 'ok' (a failure of the sandbox) or the error code. */
  writes: Record<string, string>;
  marker: string;
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? String(error);

const attempt = (fn: () => void): string => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return codeOf(error);
  }
};

const main = (): void => {
  const marker = `queen-fleet-probe-${process.argv[2] ?? 'unit'}`;
  let credentials: ProbeResult['credentials'];
  try {
    credentials = { ok: true, text: readFileSync('/root/.aws/credentials', 'utf8') };
  } catch (error) {
    credentials = { ok: false, code: codeOf(error) };
  }
  const result: ProbeResult = {
    uid: process.getuid?.() ?? -1,
    credentials,
    home: readdirSync('/root').sort(),
    dataDir: attempt(() => {
      writeFileSync(`/var/queen-fleet/${marker}.tmp`, 'x');
      rmSync(`/var/queen-fleet/${marker}.tmp`);
    }),
    private: Object.fromEntries(PRIVATE.map((dir) => [dir, attempt(() => writeFileSync(`${dir}/${marker}`, 'x'))])),
    writes: Object.fromEntries(
      FORBIDDEN.map((dir) => [dir, attempt(() => writeFileSync(`${dir === '/' ? '' : dir}/${marker}`, 'x'))]),
    ),
    marker,
  };
  writeFileSync(`/var/queen-fleet/${marker}.json`, JSON.stringify(result));
};

if (require.main === module) main();
