import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');
/** Where the installer and the units live in the repository. */
export const INSTALL_DIR = join(ROOT, 'agent', 'install');
/** The systemd units the installer ships, in the order the bundle lists them. */
export const UNITS = ['queen-fleet-peer-sync.service', 'queen-fleet-worker.service'] as const;

/** A fleet config as an operator writes it (fixed ids). */
export const SAMPLE_CONFIG = {
  region: 'us-west-2',
  bucket: 'queens-fleet-state-dev',
  queueUrl: 'https://sqs.us-west-2.amazonaws.com/123456789012/queen-fleet-tasks',
  topicArn: 'arn:aws:sns:us-west-2:123456789012:queen-fleet-alerts',
  nodes: [
    { name: 'node-1', instanceId: 'mi-0123456789abcdef0' },
    { name: 'node-2', instanceId: 'mi-0123456789abcdef1' },
  ],
};

/** A systemd unit file as section → key → values. */
export type Unit = Record<string, Record<string, string[]>>;

/** A bundle directory with stand-in bundles and the real units. */
export const makeBundle = (dir: string): void => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'agent.js'), 'console.log("agent");\n');
  writeFileSync(join(dir, 'worker.js'), 'console.log("worker");\n');
  writeFileSync(join(dir, 'worker.js.map'), '{"version":3}\n');
  for (const unit of UNITS) copyFileSync(join(INSTALL_DIR, unit), join(dir, unit));
};

/** Every path below the root with its type, mode and content: what "the same result" means. */
export const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = join(rel, name);
      const st = lstatSync(join(dir, path));
      const perm = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(join(dir, path))}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${perm}`;
        walk(path);
      } else out[path] = `file ${perm} ${readFileSync(join(dir, path), 'utf8')}`;
    }
  };
  walk('');
  return out;
};

/** A unit file as section → key → values (keys such as SystemCallFilter repeat). */
export const parseUnit = (text: string): Unit => {
  const unit: Unit = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header?.[1] !== undefined) {
      section = header[1];
      unit[section] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    ((unit[section] ??= {})[key] ??= []).push(line.slice(eq + 1));
  }
  return unit;
};

/** The unit `name` as shipped in agent/install, parsed. */
export const readUnit = (name: string): Unit => parseUnit(readFileSync(join(INSTALL_DIR, name), 'utf8'));

/** The paths of one test's temp root; all of them lie below `tmp`. */
export interface InstallPaths {
  /** The test's temp directory, removed after the test. */
  tmp: string;
  /** A bundle directory made by `makeBundle`. */
  bundle: string;
  /** An empty directory to pass as `--root`. */
  root: string;
  /** A config file holding `SAMPLE_CONFIG`. */
  config: string;
  /** The file the fake `systemctl` appends its arguments to; absent until it is called. */
  calls: string;
  /** The environment for the installer: a recording fake `systemctl` first on PATH. */
  env: NodeJS.ProcessEnv;
}

/** A fresh temp root per test, with the installer bound to it. */
export interface InstallRoot extends Readonly<InstallPaths> {
  /** Runs `script` (the repository's install.sh by default) with `args` in the temp root's environment. */
  install: (args: string[], script?: string) => SpawnSyncReturns<string>;
  /** The arguments of a plain install of node-1 from the temp bundle and config into the temp root. */
  standard: () => string[];
  /** `path` below the temp root. */
  at: (path: string) => string;
  /** The permission bits of `path` below the temp root, as four octal digits. */
  mode: (path: string) => string;
}

const createPaths = (tmp: string): InstallPaths => {
  const paths: InstallPaths = {
    tmp,
    bundle: join(tmp, 'bundle'),
    root: join(tmp, 'root'),
    config: join(tmp, 'config.json'),
    calls: join(tmp, 'systemctl-calls'),
    env: { ...process.env, PATH: `${join(tmp, 'bin')}:${process.env.PATH ?? ''}` },
  };
  makeBundle(paths.bundle);
  mkdirSync(paths.root);
  writeFileSync(paths.config, JSON.stringify(SAMPLE_CONFIG, null, 2));
  // A systemctl that only records: the installer must never reach it below a temp root.
  mkdirSync(join(tmp, 'bin'));
  writeFileSync(join(tmp, 'bin', 'systemctl'), `#!/bin/sh\necho "$@" >> '${paths.calls}'\n`);
  chmodSync(join(tmp, 'bin', 'systemctl'), 0o755);
  return paths;
};

/**
 * Registers beforeEach/afterEach hooks that give every test in the enclosing describe (or file)
 * a fresh temp root, and returns a view of it. Read its fields inside tests, not at describe time:
 * they change with each test. The functions may be destructured once.
 */
export const useInstallRoot = (): InstallRoot => {
  let tmp: string | undefined;
  let paths: InstallPaths | undefined;
  const current = (): InstallPaths => {
    if (paths === undefined) throw new Error('useInstallRoot: the temp root exists only while a test runs');
    return paths;
  };

  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'qf-install-'));
    paths = createPaths(tmp);
  });

  afterEach(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
    tmp = undefined;
    paths = undefined;
  });

  const at = (path: string): string => join(current().root, path);
  return {
    get tmp() {
      return current().tmp;
    },
    get bundle() {
      return current().bundle;
    },
    get root() {
      return current().root;
    },
    get config() {
      return current().config;
    },
    get calls() {
      return current().calls;
    },
    get env() {
      return current().env;
    },
    install: (args, script = join(INSTALL_DIR, 'install.sh')) =>
      spawnSync('bash', [script, ...args], { env: current().env, encoding: 'utf8', timeout: 15_000 }),
    standard: () => {
      const { bundle, config, root } = current();
      return ['--bundle', bundle, '--config', config, '--node', 'node-1', '--root', root];
    },
    at,
    mode: (path) => (statSync(at(path)).mode & 0o7777).toString(8).padStart(4, '0'),
  };
};
