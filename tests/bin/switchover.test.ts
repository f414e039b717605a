import { PassThrough } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { runSwitchover, type SwitchoverIo, type SwitchoverOptions } from '../../bin/commands/switchover';
import { ClientFactory } from '../../lib/aws/clients';
import { buildConfig } from '../../lib/core/config';
import { ValidationError } from '../../lib/core/errors';
import { nextEpoch } from '../../lib/core/fleet/lease';
import { emptyWatch, emptyWatchdogState } from '../../lib/core/fleet/watchdog-state';
import type { Leader } from '../../lib/core/schemas';
import { switchoverOutcome } from '../../lib/core/views/switchover';
import { opsDeps, type OpsDeps } from '../../lib/ops/observe';
import { heartbeat, sample } from '../helpers/fixtures';
import { memoryLogger } from '../helpers/memory-logger';
import { MemoryS3 } from '../helpers/memory-s3';

/**
 * `fleet switchover` as the command runs it (bin/commands/switchover.ts `runSwitchover`), on an
 * in-memory S3: the prompt, --yes, --dry-run, the refusals, --cancel, and the wait for the handover.
 */
const NOW = 1_800_000_000_000;
const NODES = [1, 2, 3].map((i) => ({ name: `node-${i}`, instanceId: `mi-0000000000000000${i}`, priority: i }));
const config = buildConfig({}, { nodes: NODES, commandWaitSeconds: 2 });
const LEADER_KEY = 'peer-sync/leader.json';
const STATE_KEY = 'peer-sync/watchdog/state.json';
const AT4: Leader = { ...nextEpoch(null, 'node-1', 't', 't', 'immediate'), epoch: 4, renewals: 30 };

let s3: MemoryS3;
let t: number;
/** Runs during each wait of the command: what the primary's agent does meanwhile. */
let meanwhile: () => void;
const deps = (): OpsDeps => ({
  ...opsDeps({ config, clients: new ClientFactory({ region: 'us-west-2' }, {}), where: 'test' }, memoryLogger().log),
  now: () => t,
  sleep: (ms: number) => {
    t += ms;
    meanwhile();
    return Promise.resolve();
  },
});
const leader = (): Leader => s3.json(LEADER_KEY) as Leader;
const maintenance = (m: object): void =>
  s3.set(STATE_KEY, { ...emptyWatchdogState(), maintenance: { paused: null, cordoned: {}, ...m } });

/** A terminal (or not) whose person answers `answer`; what the command printed. */
const io = (
  terminal: boolean,
  answer?: string,
): SwitchoverIo & { printed: string[]; errors: string[]; asked: string } => {
  const output = new PassThrough();
  const input = new PassThrough();
  const self = {
    terminal,
    input,
    output,
    printed: [] as string[],
    errors: [] as string[],
    asked: '',
    out: (text: string) => void self.printed.push(text),
    err: (text: string) => void self.errors.push(text),
  };
  output.on('data', (chunk: Buffer) => (self.asked += chunk.toString()));
  input.end(answer === undefined ? undefined : `${answer}\n`);
  return self;
};
const run = (o: SwitchoverOptions, where = io(false)) =>
  runSwitchover(deps(), 'test', o, where).then((code) => ({ code, ...where }));
const ask: SwitchoverOptions = { to: 'node-2', reason: 'kernel update', wait: false };

beforeEach(() => {
  t = NOW;
  meanwhile = () => undefined;
  s3 = new MemoryS3();
  s3.mock.on(ListObjectsV2Command).callsFake((input: { Prefix?: string }) => ({
    Contents: [...s3.objects.keys()]
      .filter((k) => k.startsWith(input.Prefix ?? ''))
      .map((Key) => ({ Key, LastModified: new Date(NOW - 1000) })),
    IsTruncated: false,
  }));
  s3.set(LEADER_KEY, AT4);
  maintenance({ paused: null, cordoned: {} });
  s3.set('peer-sync/nodes/node-1/heartbeat.json', heartbeat('node-1', [sample(0, { epochSeen: 4 })]));
  for (const node of ['node-2', 'node-3'])
    s3.set(
      `peer-sync/nodes/${node}/heartbeat.json`,
      heartbeat(node, [sample(0, { epochSeen: 4, consumingEpoch: null })]),
    );
});
afterAll(() => s3.restore());

describe('fleet switchover', () => {
  it('on a terminal shows the steps and asks; "y" records the request on the lease for its holder', async () => {
    const r = await run(ask, io(true, 'y'));
    expect(r.code).toBe(0);
    expect(r.asked).toContain('Hand the primary role over from node-1 to node-2? [y/N]');
    expect(r.printed[0]).toMatch(/would record switchover sw-4-\d+-[0-9a-f]{8} on leader\.json, by CAS on node-1/);
    expect(leader()).toMatchObject({
      primary: 'node-1',
      epoch: 4,
      renewals: 30,
      switchover: { to: 'node-2', epoch: 4, reason: 'kernel update', id: expect.stringMatching(/^sw-4-/) },
    });
  });

  it('changes nothing when the person does not say yes', async () => {
    for (const answer of ['n', '', undefined]) {
      const r = await run(ask, io(true, answer));
      expect(r.code).toBe(1);
      expect(r.errors).toContain('fleet switchover: not confirmed: nothing changed');
      expect(leader().switchover).toBeUndefined();
    }
  });

  it('asks nothing with --yes (or --force, or off a terminal) and records the request', async () => {
    for (const o of [{ yes: true }, { force: true }]) {
      s3.set(LEADER_KEY, AT4);
      const r = await run({ ...ask, ...o }, io(true));
      expect(r.asked).toBe('');
      expect(r.code).toBe(0);
      expect(leader().switchover?.to).toBe('node-2');
    }
  });

  it('--dry-run shows the steps and changes nothing', async () => {
    const r = await run({ ...ask, dryRun: true }, io(true));
    expect(r.code).toBe(0);
    expect(r.asked).toBe('');
    expect(r.printed.join('\n')).toContain('Dry run: nothing was changed.');
    expect(leader()).toEqual(AT4);
  });

  it.each([
    ['the fleet is paused', () => maintenance({ paused: { at: 1, by: 'ops', reason: null, until: null } })],
    ['node-2 is cordoned', () => maintenance({ cordoned: { 'node-2': { at: 1, by: 'ops', reason: null } } })],
  ])('refuses while %s, even with --ignore-readiness, and changes nothing', async (why, arrange) => {
    arrange();
    const r = await run({ ...ask, ignoreReadiness: true, yes: true });
    expect(r.code).toBe(1);
    expect(r.errors.join('\n')).toContain(`refused: ${why}`);
    expect(leader()).toEqual(AT4);
  });

  it('refuses a target that is not ready unless --ignore-readiness, and one request over another', async () => {
    s3.set('peer-sync/nodes/node-3/heartbeat.json', heartbeat('node-3', [sample(0, { epochSeen: 3 })]));
    const r = await run({ ...ask, to: 'node-3' });
    expect(r.errors.join('\n')).toMatch(/refused: node-3 is not ready: .*epoch 3.*--ignore-readiness/);
    expect(leader()).toEqual(AT4);
    const forced = await run({ ...ask, to: 'node-3', ignoreReadiness: true });
    expect(forced.code).toBe(0);
    expect(leader().switchover).toMatchObject({ to: 'node-3', reason: 'kernel update (--ignore-readiness)' });
    const second = await run(ask);
    expect(second.errors.join('\n')).toMatch(/refused: switchover sw-4-\S+ to node-3 is pending/);
  });

  it('waits for the handover and reports how it went, read from the record the primary wrote', async () => {
    meanwhile = () => {
      const req = leader().switchover;
      if (req === undefined) return;
      const reason = `switchover ${req.id}: node-1 → node-2 (drained): kernel update`;
      s3.set(LEADER_KEY, nextEpoch(AT4, 'node-2', reason, 'node-1', 'immediate'));
    };
    const r = await run({ ...ask, wait: true });
    expect(r.code).toBe(0);
    expect(r.printed.join('\n')).toContain(
      'node-2 is primary of epoch 5, drained to checkpoints and handed over at once',
    );
  });

  it('says when the primary dropped the request, and exits 1', async () => {
    meanwhile = () => s3.set(LEADER_KEY, { ...AT4, renewals: 31 });
    const r = await run({ ...ask, wait: true });
    expect(r.code).toBe(1);
    expect(r.printed.join('\n')).toContain('node-1 dropped the request');
  });

  it('--cancel withdraws a pending request, and says when there is none', async () => {
    await run(ask);
    const r = await run({ cancel: true });
    expect(r.code).toBe(0);
    expect(r.printed[0]).toMatch(/^switchover sw-4-\S+ withdrawn/);
    expect(leader()).toEqual(AT4);
    expect((await run({ cancel: true })).printed).toEqual(['no switchover is pending']);
  });

  it('rejects a call without --to or --reason as bad input', async () => {
    await expect(run({ reason: 'x' })).rejects.toThrow(ValidationError);
  });
});

describe('switchoverOutcome', () => {
  const id = 'sw-4-1-ab';
  it('tells a handover by the old primary from a move made otherwise, a drop and a wait', () => {
    const handed = nextEpoch(AT4, 'node-2', `switchover ${id}: node-1 → node-2 (drained): x`, 'node-1', 'immediate');
    expect(switchoverOutcome(id, 4, handed)).toMatchObject({ kind: 'handed-over', to: 'node-2', epoch: 5 });
    expect(switchoverOutcome(id, 4, nextEpoch(AT4, 'node-3', 'lease expired', 'node-3', 'immediate'))).toEqual({
      kind: 'moved',
      primary: 'node-3',
      epoch: 5,
    });
    expect(
      switchoverOutcome(id, 4, { ...AT4, switchover: { id, to: 'node-2', epoch: 4, by: 'x', reason: 'x' } }),
    ).toEqual({ kind: 'pending' });
    expect(switchoverOutcome(id, 4, AT4)).toEqual({ kind: 'dropped' });
  });
});

// The watchdog state the readiness rule reads also holds open incidents: a busy primary refuses.
it('refuses while the watchdog is restarting the primary', async () => {
  t = NOW;
  const incident = { id: 'node-1-e4-i1', kind: 'stall', openedAt: 1, epoch: 4, restart: null };
  const watch = { ...emptyWatch(), incident: { ...incident, stage: { name: 'restart-sent' } }, incidents: 1 };
  s3.set(STATE_KEY, { ...emptyWatchdogState(), nodes: { 'node-1': watch } });
  const r = await run(ask);
  expect(r.code).toBe(1);
  expect(r.errors.join('\n')).toContain("the watchdog is restarting node-1's worker");
});
