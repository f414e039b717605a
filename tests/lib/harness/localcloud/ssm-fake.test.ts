import { FAITHFUL, KIND } from '../../../../lib/harness/localcloud/behaviour';
import type { Chance } from '../../../../lib/harness/localcloud/chance';
import { SsmModel, type SsmHost } from '../../../../lib/harness/localcloud/ssm-fake';

const ID = 'mi-00000000000000001';
const CMD = 'systemctl restart queen-fleet-worker';

/** Randomness that always takes the slowest value of a range and never rolls a rare event. */
const slowest = {
  random: () => 0.99,
  chance: () => false,
  between: (_min: number, max: number) => max,
  exponential: (m: number) => m,
} as unknown as Chance;

/** One machine whose reachability the test sets, and whose commands finish when the test says. */
const machine = () => {
  const state = { reachable: true, runs: 0, finish: undefined as undefined | ((ok: boolean) => void) };
  const host: SsmHost = {
    exists: (id) => id === ID,
    reachable: () => state.reachable,
    nameOf: () => 'node-1',
    run: () => {
      state.runs++;
      return new Promise((resolve) => {
        state.finish = (ok) => resolve({ ok, output: ok ? 'done' : 'failed' });
      });
    },
  };
  return { state, host };
};

const setup = (behaviour = FAITHFUL) => {
  let now = 1_000_000;
  const { state, host } = machine();
  const ssm = new SsmModel(host, behaviour, new Set([CMD]), slowest, () => now);
  ssm.register(ID);
  const advance = (ms: number): void => {
    now += ms;
    ssm.tick();
  };
  return { ssm, state, advance, at: () => now };
};

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('SsmModel (ssmRunCommand, ssmPing)', () => {
  it('answers InvocationDoesNotExist for a moment after SendCommand, then Pending → InProgress → Success', async () => {
    const { ssm, state, advance } = setup();
    const sent = ssm.send(ID, CMD, 'watchdog', 60, 60);
    if (!sent.ok) throw new Error('not sent');
    expect(ssm.get(sent.record.commandId, ID)).toBeNull();
    advance(FAITHFUL.ssmRunCommand.invisibleMaxMs);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('Pending');
    advance(FAITHFUL.ssmRunCommand.deliveryMaxMs);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('InProgress');
    expect(state.runs).toBe(1);
    state.finish?.(true);
    await settle();
    expect(ssm.get(sent.record.commandId, ID)).toMatchObject({ status: 'Success', ok: true });
  });

  it("lists an instance's commands with their comments, newest first, only once they are visible", () => {
    const { ssm, advance } = setup();
    const first = ssm.send(ID, CMD, 'watchdog', 60, 60, 'queen-fleet node-1-e1-i1');
    expect(ssm.list(ID)).toEqual([]);
    advance(FAITHFUL.ssmRunCommand.invisibleMaxMs);
    const second = ssm.send(ID, CMD, 'watchdog', 60, 60, 'queen-fleet node-1-e1-i2');
    if (!first.ok || !second.ok) throw new Error('not sent');
    expect(ssm.list(ID).map((c) => c.comment)).toEqual(['queen-fleet node-1-e1-i1']);
    advance(FAITHFUL.ssmRunCommand.invisibleMaxMs);
    expect(ssm.list(ID).map((c) => c.comment)).toEqual(['queen-fleet node-1-e1-i2', 'queen-fleet node-1-e1-i1']);
    expect(ssm.list('mi-00000000000000009')).toEqual([]);
  });

  it('keeps a command for an unreachable node Pending, then Delayed, and runs it when the node is back in time', () => {
    const { ssm, state, advance } = setup();
    state.reachable = false;
    const sent = ssm.send(ID, CMD, 'watchdog', 60, 60);
    if (!sent.ok) throw new Error('not sent');
    advance(10_000);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('Pending');
    advance(25_000);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('Delayed');
    expect(state.runs).toBe(0);
    state.reachable = true;
    advance(100);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('InProgress');
    expect(state.runs).toBe(1);
  });

  it(
    'never runs a command whose delivery timeout passed, ' + 'and times it out after delivery plus execution timeout',
    () => {
      const { ssm, state, advance } = setup();
      state.reachable = false;
      const sent = ssm.send(ID, CMD, 'watchdog', 30, 60);
      if (!sent.ok) throw new Error('not sent');
      advance(31_000);
      state.reachable = true;
      advance(100);
      expect(state.runs).toBe(0);
      expect(ssm.get(sent.record.commandId, ID)?.status).toBe('Delayed');
      advance(60_000);
      expect(ssm.get(sent.record.commandId, ID)).toMatchObject({ status: 'TimedOut', details: 'DeliveryTimedOut' });
    },
  );

  it('cancels a waiting command so that it never runs when the node comes back', () => {
    const { ssm, state, advance } = setup();
    state.reachable = false;
    const sent = ssm.send(ID, CMD, 'watchdog', 60, 60);
    if (!sent.ok) throw new Error('not sent');
    advance(5_000);
    ssm.cancel(sent.record.commandId);
    state.reachable = true;
    advance(5_000);
    expect(state.runs).toBe(0);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('Cancelled');
  });

  it('leaves a command InProgress on a node that died under it, until its execution timeout', () => {
    const { ssm, state, advance } = setup();
    const sent = ssm.send(ID, CMD, 'watchdog', 30, 30);
    if (!sent.ok) throw new Error('not sent');
    advance(5_000);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('InProgress');
    state.reachable = false;
    advance(20_000);
    expect(ssm.get(sent.record.commandId, ID)?.status).toBe('InProgress');
    advance(40_000);
    expect(ssm.get(sent.record.commandId, ID)).toMatchObject({ status: 'TimedOut', details: 'ExecutionTimedOut' });
  });

  it('reports a crashed node Online until its pings have been missing for the real interval', () => {
    const { ssm, state, advance } = setup();
    advance(FAITHFUL.ssmPing.intervalMs);
    state.reachable = false;
    advance(FAITHFUL.ssmPing.lostAfterMs - 1_000);
    expect(ssm.pingStatus(ID)).toBe('Online');
    advance(FAITHFUL.ssmPing.intervalMs);
    expect(ssm.pingStatus(ID)).toBe('ConnectionLost');
    // Reachable again: Online only once the agent's next ping comes (within an interval).
    state.reachable = true;
    advance(10);
    expect(ssm.pingStatus(ID)).toBe('ConnectionLost');
    advance(FAITHFUL.ssmPing.intervalMs);
    expect(ssm.pingStatus(ID)).toBe('Online');
  });

  it('with the behaviour off, fails a command to an unreachable node at once and loses its ping at once', () => {
    const { ssm, state } = setup(KIND);
    state.reachable = false;
    const sent = ssm.send(ID, CMD, 'watchdog', 60, 60);
    if (!sent.ok) throw new Error('not sent');
    expect(ssm.get(sent.record.commandId, ID)).toMatchObject({ status: 'Failed', details: 'Undeliverable' });
    expect(ssm.pingStatus(ID)).toBe('ConnectionLost');
  });

  it('refuses an unknown instance and a delivery timeout below SSM minimum', () => {
    const { ssm } = setup();
    expect(ssm.send('mi-00000000000000009', CMD, 'watchdog', 60, 60)).toMatchObject({
      ok: false,
      type: 'InvalidInstanceId',
    });
    expect(ssm.send(ID, CMD, 'watchdog', 10, 60)).toMatchObject({ ok: false, type: 'InvalidParameters' });
  });
});
