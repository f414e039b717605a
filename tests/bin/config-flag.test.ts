import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFleet } from '../helpers/children';

describe('fleet --config FILE', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-config-flag-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the config file doctor reads, before the one FLEET_CONFIG_FILE names', async () => {
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    writeFileSync(good, '{"region":"eu-west-2"}');
    writeFileSync(bad, '{"stallSamples":1}');
    // A config doctor cannot load is its one failed check: no AWS call is made (and none could leave this machine).
    const offline = {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    const r = await runFleet(['doctor', '--config', bad, '--json'], 20_000, { FLEET_CONFIG_FILE: good, ...offline });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] };
    expect(doc.checks).toEqual([expect.objectContaining({ name: 'config', status: 'fail' })]);
    expect(doc.checks[0]?.detail).toMatch(/stallSamples/);
  }, 30_000);

  it('makes enroll refuse, not guess the stage, when no config file is found (exit 2)', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const r = await runFleet(['enroll', 'node-1'], 20_000, { FLEET_CONFIG_FILE: '', FLEET_STAGE: '' }, empty);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no fleet config found: run `fleet init --stack STAGE` in this directory');
  }, 30_000);

  it('makes enroll read the ./fleet-config.json fleet init wrote when nothing else names one', async () => {
    const here = join(dir, 'here');
    mkdirSync(here);
    writeFileSync(join(here, 'fleet-config.json'), '{"stallSamples":1}');
    const r = await runFleet(['enroll', 'node-1'], 20_000, { FLEET_CONFIG_FILE: '', FLEET_STAGE: '' }, here);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/stallSamples/);
  }, 30_000);

  it('makes enroll refuse a config file that sets no stage, rather than take the default (exit 2)', async () => {
    const here = join(dir, 'stageless');
    mkdirSync(here);
    writeFileSync(join(here, 'fleet-config.json'), '{"region":"eu-west-2"}');
    const r = await runFleet(['enroll', 'node-1'], 20_000, { FLEET_CONFIG_FILE: '', FLEET_STAGE: '' }, here);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('fleet-config.json sets no stage');
  }, 30_000);

  it('names the flag when its file cannot be read (exit 2)', async () => {
    const r = await runFleet(['enroll', 'node-1', '--config', join(dir, 'missing.json')], 20_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config file .*missing\.json: cannot be read/);
  }, 30_000);
});
