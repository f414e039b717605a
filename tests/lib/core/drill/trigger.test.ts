import {
  describeEvent,
  eventAtSchema,
  onEvent,
  unfiredReasons,
  type Pending,
} from '../../../../lib/core/drill/trigger';

const at = eventAtSchema.parse({ after: 'checkpoint', node: 'primary', stages: 1, count: 2 });
const pending = (over: Partial<Pending> = {}): Pending => ({
  fault: 0,
  kind: 'kill-node',
  at,
  node: 'node-1',
  seen: 0,
  ...over,
});
const cp = (node: string, stages: number) => ({ kind: 'checkpoint' as const, node, stages });

describe('faults that wait for an event', () => {
  it('fire at the count-th matching event of their node, once, and let others by', () => {
    let state = [pending()];
    for (const e of [cp('node-2', 1), cp('node-1', 2), cp('node-1', 1)]) {
      const out = onEvent(state, e);
      expect(out.fire).toEqual([]);
      state = out.pending;
    }
    expect(state[0]?.seen).toBe(1);
    const out = onEvent(state, cp('node-1', 1));
    expect(out.fire.map((p) => p.fault)).toEqual([0]);
    expect(out.pending).toEqual([]);
  });

  it('count every checkpoint when no stages are named, and default to the first', () => {
    const any = eventAtSchema.parse({ after: 'checkpoint', node: 'node-2' });
    expect(any.count).toBe(1);
    expect(onEvent([pending({ at: any, node: 'node-2' })], cp('node-2', 3)).fire).toHaveLength(1);
  });

  it('name the event that never came, as a failed drill says it', () => {
    expect(describeEvent(at, 'node-1')).toBe('the 2nd checkpoint of node-1 with 1 stage(s) done');
    expect(unfiredReasons([pending({ seen: 1 })], 500)).toEqual([
      {
        fault: 0,
        kind: 'kill-node',
        reason:
          'faults.0 (kill-node) never fired: the 2nd checkpoint of node-1 with 1 stage(s) done ' +
          'did not come within 500 s (1 of 2 seen)',
      },
    ]);
  });
});
