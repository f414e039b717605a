import fc from 'fast-check';
import { instanceFilter, pickInstance, type InstanceSeen } from '../../../../lib/core/fleet/managed-instance';

const seenArb: fc.Arbitrary<InstanceSeen> = fc.record({
  instanceId: fc.stringMatching(/^mi-[0-9a-f]{17}$/),
  online: fc.boolean(),
  lastPing: fc.option(fc.integer({ min: 0, max: 2_000_000_000_000 }), { nil: null }),
});

describe('instanceFilter', () => {
  it('asks for a configured id, or else for the node role by stage and region', () => {
    const where = { stage: 'prod', region: 'us-west-2' };
    expect(instanceFilter({ name: 'node-1', instanceId: 'mi-00000000000000001' }, where)).toEqual({
      Key: 'InstanceIds',
      Values: ['mi-00000000000000001'],
    });
    expect(instanceFilter({ name: 'node-1' }, where)).toEqual({
      Key: 'IamRole',
      Values: ['queens-fleet-node-prod-us-west-2-node-1'],
    });
  });
});

describe('pickInstance', () => {
  it('picks nothing from nothing', () => {
    expect(pickInstance([])).toEqual({ kind: 'none' });
  });

  it('picks the one online registration, else the latest ping, whatever the order; two online are refused', () => {
    fc.assert(
      fc.property(fc.array(seenArb, { minLength: 1, maxLength: 6 }), (seen) => {
        const picked = pickInstance(seen);
        expect(picked).toEqual(pickInstance([...seen].reverse()));
        const online = seen.filter((s) => s.online);
        if (online.length > 1) {
          expect(picked).toEqual({ kind: 'ambiguous', ids: online.map((s) => s.instanceId).sort() });
          return;
        }
        if (picked.kind !== 'one') throw new Error('picked nothing from a non-empty list');
        const { instance } = picked;
        if (online.length === 1) expect(instance).toEqual(online[0]);
        for (const s of seen.filter((o) => o.online === instance.online))
          expect(s.lastPing ?? -1).toBeLessThanOrEqual(instance.lastPing ?? -1);
      }),
    );
  });
});
