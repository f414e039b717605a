import { eventAtSchema } from '../../../../lib/core/drill/trigger';
import { EventTriggers } from '../../../../lib/harness/drill/triggers';

const cp = (node: string, stages: number) => ({ kind: 'checkpoint' as const, node, stages });

describe('EventTriggers (the drill side)', () => {
  it('fires each fault once, right as its event is seen, nothing once closed, and reports what never fired', () => {
    const fired: number[] = [];
    const errors: number[] = [];
    const t = new EventTriggers((i) => errors.push(i));
    t.add(0, 'kill-node', eventAtSchema.parse({ after: 'checkpoint', node: 'node-1', stages: 1 }), 'node-1', () =>
      fired.push(0),
    );
    t.add(1, 'blackhole-node', eventAtSchema.parse({ after: 'checkpoint', node: 'node-2' }), 'node-2', () => {
      throw new Error('boom');
    });
    t.add(2, 'crash-worker', eventAtSchema.parse({ after: 'checkpoint', node: 'node-1', count: 3 }), 'node-1', () =>
      fired.push(2),
    );
    t.saw(cp('node-1', 1));
    t.saw(cp('node-1', 1));
    t.saw(cp('node-2', 4));
    expect({ fired, errors }).toEqual({ fired: [0], errors: [1] });
    expect(t.close(300).map((u) => u.fault)).toEqual([2]);
    t.saw(cp('node-1', 2));
    expect(fired).toEqual([0]);
  });
});
