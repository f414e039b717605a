import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALL_DIR } from '../helpers/install';

/** A fake command on PATH that records its arguments, then runs `body`. */
const fake = (bin: string, name: string, log: string, body = ''): void => {
  writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${log}'\n${body}\n`);
  chmodSync(join(bin, name), 0o755);
};

describe('agent/install/ssm-register.sh', () => {
  let tmp: string;
  let bin: string;
  let log: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'qf-ssm-'));
    bin = join(tmp, 'bin');
    log = join(tmp, 'calls');
    mkdirSync(bin);
    env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      SSM_REGISTRATION_FILE: join(tmp, 'registration'),
      SSM_CREDENTIALS_FILE: join(tmp, 'credentials'),
    };
    fake(bin, 'systemctl', log);
    // No snap: the Debian package's agent.
    fake(bin, 'snap', log, 'exit 1');
    fake(
      bin,
      'amazon-ssm-agent',
      log,
      `echo '{"ManagedInstanceID":"mi-0123456789abcdef0"}' > '${join(tmp, 'registration')}'\n` +
        `echo '[default]' > '${join(tmp, 'credentials')}'`,
    );
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const run = (args: string[]) =>
    spawnSync('bash', [join(INSTALL_DIR, 'ssm-register.sh'), ...args], { env, encoding: 'utf8', timeout: 15_000 });

  it("registers the agent with the node's activation, stopping it first and starting it after", () => {
    const r = run(['act-1', 'c0de', 'eu-west-2']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('registered with SSM: {"ManagedInstanceID":"mi-0123456789abcdef0"}');
    expect(
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('snap')),
    ).toEqual([
      'systemctl stop amazon-ssm-agent',
      'amazon-ssm-agent -register -y -code c0de -id act-1 -region eu-west-2',
      'systemctl start amazon-ssm-agent',
      '',
    ]);
  });

  it('leaves a node that is registered already as it is: a rerun of install.sh uses no second activation', () => {
    writeFileSync(join(tmp, 'registration'), '{"ManagedInstanceID":"mi-0123456789abcdef9"}');
    const r = run(['act-2', 'c0de', 'eu-west-2']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/already registered .*mi-0123456789abcdef9.*: the activation is not used/);
    expect(existsSync(log)).toBe(false);
  });

  it('fails, naming the step, when no SSM agent is installed', () => {
    rmSync(join(bin, 'amazon-ssm-agent'));
    const r = spawnSync('bash', [join(INSTALL_DIR, 'ssm-register.sh'), 'a', 'c', 'r'], {
      env: { ...env, PATH: `${bin}:/usr/bin:/bin` },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/the SSM agent is not installed/);
  });
});
