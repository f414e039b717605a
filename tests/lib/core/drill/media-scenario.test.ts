import { parseScenario } from '../../../../lib/core/drill/scenario';
import { describeEvent, eventAtSchema, onEvent, type Pending } from '../../../../lib/core/drill/trigger';

/** A media drill's scenario: its test episodes, and the `source` event a fault may wait for. */
const base = {
  name: 'media',
  nodes: 2,
  seconds: 200,
  workload: { tasks: 4, meanTaskSeconds: 60, payload: { source: '{source}' } },
  media: { episodes: 4, seconds: [8, 30, 8, 8] },
};
const refusal = (input: unknown): string => {
  try {
    parseScenario(input);
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('media scenarios', () => {
  it('takes episodes with one length each, or one for all, and no stall by default', () => {
    expect(parseScenario(base).media).toEqual({ episodes: 4, seconds: [8, 30, 8, 8], stall: [] });
    expect(parseScenario({ ...base, media: { episodes: 2 } }).media).toEqual({ episodes: 2, seconds: 20, stall: [] });
  });

  it('refuses lengths, stalls and awaited episodes the media does not have', () => {
    expect(refusal({ ...base, media: { episodes: 3, seconds: [8, 30] } })).toMatch(
      /media\.seconds: must give one length per episode/,
    );
    expect(refusal({ ...base, media: { episodes: 3, stall: [4] } })).toMatch(
      /media\.stall\.0: names an episode the media does not have/,
    );
    const late = { at: { after: 'source', node: 'primary', episode: 5 }, kind: 'kill-node', target: 'primary' };
    expect(refusal({ ...base, faults: [late] })).toMatch(/faults\.0\.at\.episode: names an episode/);
  });

  it('refuses a source event in a scenario without media', () => {
    const plain = { ...base, media: undefined };
    const fault = { at: { after: 'source', node: 'primary' }, kind: 'kill-node', target: 'primary' };
    expect(refusal({ ...plain, faults: [fault] })).toMatch(/faults\.0\.at\.after: source needs the scenario's media/);
  });

  it('fires a fault waiting for an episode only on reads of that episode', () => {
    const at = eventAtSchema.parse({ after: 'source', node: 'primary', episode: 2 });
    const pending: Pending[] = [{ fault: 0, kind: 'kill-node', at, node: 'node-1', seen: 0 }];
    const read = (episode: number) => ({ kind: 'source' as const, node: 'node-1', stages: 0, episode });
    expect(onEvent(pending, read(1)).fire).toEqual([]);
    expect(onEvent(pending, read(2)).fire.map((p) => p.fault)).toEqual([0]);
    expect(describeEvent(at, 'node-1')).toBe('node-1 read ep-2 past its middle (1st time)');
  });
});
