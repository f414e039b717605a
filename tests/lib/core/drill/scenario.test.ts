import { ValidationError } from '../../../../lib/core/errors';
import { isFleetWide, parseScenario } from '../../../../lib/core/drill/scenario';
import { planWorkload } from '../../../../lib/core/drill/workload';

const valid = {
  name: 'stall',
  nodes: 2,
  seconds: 600,
  workload: { tasks: 20, meanTaskSeconds: 90 },
  faults: [{ at: 120, kind: 'stall-worker', target: 'primary', until: 'restart' }],
  expect: { restarts: { min: 1, max: 1 }, failovers: 0, maxDetectSeconds: 170 },
};

/** The valid scenario with this one fault (and `nodes` nodes). */
const only = (fault: object, nodes = 2): object => ({ ...valid, nodes, faults: [fault] });

const fieldOf = (input: unknown): string => {
  try {
    parseScenario(input);
  } catch (error) {
    if (error instanceof ValidationError) return error.field;
    throw error;
  }
  throw new Error('accepted');
};

describe('parseScenario', () => {
  it('accepts a full example and fills defaults', () => {
    const s = parseScenario(valid);
    expect(s.workload.spread).toBe(0.3);
    expect(s.faults[0]).toMatchObject({ kind: 'stall-worker', until: 'restart' });
  });

  it.each([
    ['an unknown expectation key', { ...valid, expect: { restart: 1 } }, 'expect.restart'],
    ['an unknown top-level key', { ...valid, node: 2 }, 'node'],
    ['a fault kind that does not exist', { ...valid, faults: [{ at: 1, kind: 'explode' }] }, 'faults.0.kind'],
    ['a fault after the end', { ...valid, faults: [{ at: 900, kind: 'crash-worker' }] }, 'faults.0.at'],
    ['an operator action after the end', { ...valid, operator: [{ at: 601, action: 'resume' }] }, 'operator.0.at'],
    ['an unknown operator action', { ...valid, operator: [{ at: 1, action: 'drain' }] }, 'operator.0.action'],
    [
      'an operator action on a node beyond the fleet',
      { ...valid, operator: [{ at: 1, action: 'cordon', target: 'node-3' }] },
      'operator.0.target',
    ],
    ['a cordon without a node', { ...valid, operator: [{ at: 1, action: 'cordon' }] }, 'operator.0.target'],
    [
      'a target node beyond the fleet',
      { ...valid, faults: [{ at: 1, kind: 'crash-worker', target: 'node-3' }] },
      'faults.0.target',
    ],
    ['a negative task count', { ...valid, workload: { tasks: -1, meanTaskSeconds: 90 } }, 'workload.tasks'],
    ['a missing name', { ...valid, name: undefined }, 'name'],
    ['a throttle rate above 1', { ...valid, faults: [{ at: 1, kind: 's3-throttle', rate: 1.5 }] }, 'faults.0.rate'],
    [
      'a clock skew without its offset',
      { ...valid, faults: [{ at: 1, kind: 'clock-skew' }] },
      'faults.0.offsetSeconds',
    ],
    [
      'a "for" on a VM crash, which cannot be undone',
      { ...valid, faults: [{ at: 1, kind: 'kill-node', for: 30 }] },
      'faults.0.for',
    ],
    ['a "for" on a crashed worker', { ...valid, faults: [{ at: 1, kind: 'crash-worker', for: 30 }] }, 'faults.0.for'],
    ['a reboot without its downtime', { ...valid, faults: [{ at: 1, kind: 'reboot-node' }] }, 'faults.0.for'],
    ['a hung stage without command stages', { ...valid, faults: [{ at: 1, kind: 'hang-stage' }] }, 'faults.0.kind'],
    [
      'a notification lag without its seconds',
      { ...valid, faults: [{ at: 1, kind: 'notification-lag' }] },
      'faults.0.seconds',
    ],
    ['an s3-outage of node-9', only({ at: 1, kind: 's3-outage', target: 'node-9' }), 'faults.0.target'],
    ['no standby', only({ at: 1, kind: 'blackhole-node', target: 'standby' }, 1), 'faults.0.target'],
  ])('rejects %s, naming the field', (_name, input, field) => {
    expect(fieldOf(input)).toBe(field);
  });

  const waitingFor = (at: unknown): unknown => ({ ...valid, faults: [{ at, kind: 'kill-node' }] });
  it.each([
    ['a node beyond the fleet', { after: 'checkpoint', node: 'node-3' }, 'faults.0.at.node'],
    ['a kind nobody can wait for', { after: 'lunch', node: 'primary' }, 'faults.0.at.after'],
    ['more stages than a task has', { after: 'checkpoint', node: 'primary', stages: 5 }, 'faults.0.at.stages'],
    ['a zeroth count', { after: 'checkpoint', node: 'primary', count: 0 }, 'faults.0.at.count'],
    ['an unknown key', { after: 'checkpoint', node: 'primary', when: 1 }, 'faults.0.at.when'],
  ])('rejects an event of %s, naming the field', (_name, at, field) => {
    expect(fieldOf(waitingFor(at))).toBe(field);
  });
});

it('accepts every fault kind real fleets meet, with "for" where the fault can be undone', () => {
  const s = parseScenario({
    ...valid,
    workload: { tasks: 2, meanTaskSeconds: 30, stages: 'command' },
    faults: [
      { at: 1, kind: 'stop-node', for: 60 },
      { at: 2, kind: 'freeze-node', for: 300 },
      { at: 3, kind: 'reboot-node', target: 'standby', for: 60 },
      { at: 4, kind: 'hang-stage' },
      { at: 5, kind: 's3-outage', for: 45 },
      { at: 6, kind: 'notification-lag', seconds: 60 },
      { at: 7, kind: 'kill-agent', for: 30 },
    ],
  });
  expect(s.faults.map((f) => f.kind)).toEqual([
    'stop-node',
    'freeze-node',
    'reboot-node',
    'hang-stage',
    's3-outage',
    'notification-lag',
    'kill-agent',
  ]);
});

describe('faults of this release', () => {
  it('keeps an s3-outage without a target fleet-wide, as the scenario files have it, and aims one with one', () => {
    const faults = [
      { at: 150, kind: 's3-outage', for: 45 },
      { at: 200, kind: 's3-outage', target: 'primary', for: 60 },
    ];
    const s = parseScenario({ ...valid, faults });
    expect(s.faults[0]).not.toHaveProperty('target');
    expect(s.faults.map(isFleetWide)).toEqual([true, false]);
  });

  it('accepts a blackhole, a watchdog crash and a fault that waits for a checkpoint, whenever it comes', () => {
    const s = parseScenario({
      ...valid,
      seconds: 100,
      faults: [
        { at: 1, kind: 'blackhole-node', target: 'primary', for: 120 },
        { at: 2, kind: 'watchdog-crash', for: 60 },
        { at: { after: 'checkpoint', node: 'primary', stages: 1 }, kind: 'kill-node', target: 'primary' },
      ],
    });
    expect(s.faults[2]?.at).toEqual({ after: 'checkpoint', node: 'primary', stages: 1, count: 1 });
    expect(s.faults.map(isFleetWide)).toEqual([false, true, false]);
  });
});

describe('planWorkload', () => {
  it('is the same for the same seed and spreads arrivals over the first half', () => {
    const s = parseScenario(valid);
    const a = planWorkload(s, 7, 20);
    expect(planWorkload(s, 7, 20)).toEqual(a);
    expect(planWorkload(s, 8, 20)).not.toEqual(a);
    expect(a).toHaveLength(20);
    expect(a.at(-1)!.at).toBeLessThan(300);
    const mean = a.reduce((sum, t) => sum + t.message.workSeconds * 20, 0) / a.length;
    expect(mean).toBeGreaterThan(60);
    expect(mean).toBeLessThan(120);
  });
});
