import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigWithSources } from '../../lib/config';
import { ValidationError } from '../../lib/core/errors';

describe('lib/config.ts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, value: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };

  it('reads the file --config names before the one FLEET_CONFIG_FILE names, and says which', () => {
    const flag = write('flag.json', { region: 'eu-west-2' });
    const env = write('env.json', { region: 'us-east-1' });
    const byFlag = loadConfigWithSources({ FLEET_CONFIG_FILE: env }, flag);
    expect(byFlag.config.region).toBe('eu-west-2');
    expect(byFlag.file).toEqual({ path: flag, via: 'flag' });
    expect(byFlag.sources.region).toEqual({ kind: 'file', path: flag });
    expect(loadConfig({ FLEET_CONFIG_FILE: env }).region).toBe('us-east-1');
    expect(loadConfigWithSources({ FLEET_CONFIG_FILE: env }).file).toEqual({ path: env, via: 'env' });
  });

  it('reads ./fleet-config.json for the CLI only, and only when neither --config nor the variable names one', () => {
    const here = process.cwd();
    process.chdir(dir);
    try {
      write('fleet-config.json', { stage: 'prod' });
      const other = write('other.json', { stage: 'test' });
      expect(loadConfigWithSources({}, undefined, true).file).toEqual({ path: 'fleet-config.json', via: 'cwd' });
      expect(loadConfig({}, undefined, true).table).toBe('queens-fleet-control-prod');
      // Agents and functions never read the directory they happen to run in.
      expect(loadConfigWithSources({}).file).toBeNull();
      expect(loadConfig({ FLEET_CONFIG_FILE: other }, undefined, true).stage).toBe('test');
      expect(loadConfig({}, other, true).stage).toBe('test');
    } finally {
      process.chdir(here);
    }
  });

  it('lets the environment override the file key by key, and names the variable', () => {
    const file = write('c.json', { region: 'eu-west-2', stage: 'prod' });
    const got = loadConfigWithSources({ FLEET_REGION: 'us-east-1' }, file);
    expect(got.config).toMatchObject({ region: 'us-east-1', bucket: 'queens-fleet-state-prod' });
    expect(got.sources.region).toEqual({ kind: 'env', name: 'FLEET_REGION' });
    expect(got.sources.bucket).toEqual({ kind: 'stage' });
  });

  it('refuses a --config file it cannot read, naming the flag', () => {
    let caught: unknown;
    try {
      loadConfig({}, join(dir, 'missing.json'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).field).toBe('--config');
    expect((caught as ValidationError).message).toMatch(/missing\.json: cannot be read/);
  });
});
