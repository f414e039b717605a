import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS } from '../../lib/core/keys';
import { watchdogStateSchema } from '../../lib/core/fleet/watchdog-state';
import { killAll, runFleet, startCloudProcess, type LocalCloudInfo } from '../helpers/children';
import { operatorFleet, seedFleet, type OperatorFleet } from '../helpers/operator';

/** `fleet pause|resume|cordon|uncordon` end to end against a seeded local cloud (tests/helpers/operator.ts). */
let cloud: LocalCloudInfo;
let dir: string;
let fleet: OperatorFleet;

const fleetRun = (args: string[]) => runFleet([...args, '--local-file', fleet.localFile], 15_000);
const stored = async () => (await fleet.store.read(KEYS.watchdogState, watchdogStateSchema))?.value.maintenance;

beforeAll(async () => {
  cloud = await startCloudProcess();
  dir = mkdtempSync(join(tmpdir(), 'qf-maintenance-'));
  fleet = operatorFleet(cloud, dir);
  await seedFleet(fleet);
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet pause and resume', () => {
  it('stores a pause with its expiry and reason, shows it in status, and resume ends it', async () => {
    const paused = await fleetRun(['pause', '--for', '2h', '--reason', 'kernel update', '--json']);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ paused: true, changed: true });
    const m = await stored();
    expect(m?.paused).toMatchObject({ reason: 'kernel update', by: expect.stringMatching(/.+/) });
    // The CLI stores the length; the watchdog's first run stamps the end by its own clock.
    expect(m?.paused).toMatchObject({ forMs: 7_200_000, until: null });

    const status = await fleetRun(['status']);
    expect(status.stdout).toMatch(/PAUSED by .+, for 120 min from the watchdog's next run: kernel update/);
    const json = await fleetRun(['status', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ watchdog: { paused: true } });

    const resumed = await fleetRun(['resume', '--json']);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ paused: false, changed: true });
    expect((await stored())?.paused).toBeNull();
    expect((await fleetRun(['resume', '--json'])).stdout).toContain('"changed": false');
  }, 60_000);

  it('refuses a duration it cannot read, with exit 2, and stores nothing', async () => {
    const before = await fleet.store.readText(KEYS.watchdogState);
    const r = await fleetRun(['pause', '--for', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--for <duration>' argument 'soon' is invalid. must be a duration such as 30m");
    expect(await fleet.store.readText(KEYS.watchdogState)).toBe(before);
  }, 30_000);
});

describe('fleet cordon and uncordon', () => {
  it('cordons a standby, shows it, refuses it as a failover target, and uncordons it', async () => {
    const r = await fleetRun(['cordon', 'node-2', '--reason', 'reboot', '--json']);
    expect(r.code).toBe(0);
    expect((await stored())?.cordoned['node-2']).toMatchObject({ reason: 'reboot' });
    expect((await fleetRun(['status'])).stdout).toContain('node-2 CORDONED');
    const plan = await fleetRun(['failover', '--to', 'node-2', '--reason', 't', '--dry-run']);
    expect(plan.stderr + plan.stdout).toContain('it is cordoned (fleet uncordon node-2)');
    expect((await fleetRun(['uncordon', 'node-2'])).code).toBe(0);
    expect((await stored())?.cordoned).toEqual({});
  }, 60_000);

  it('refuses the primary and an unknown node with exit 2, and stores nothing', async () => {
    const before = await fleet.store.readText(KEYS.watchdogState);
    const primary = await fleetRun(['cordon', 'node-1']);
    expect(primary.code).toBe(2);
    expect(primary.stderr).toContain('node-1 is the primary: move the role first');
    const unknown = await fleetRun(['cordon', 'node-9']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('node-9 is not a configured node');
    expect(await fleet.store.readText(KEYS.watchdogState)).toBe(before);
  }, 30_000);
});
