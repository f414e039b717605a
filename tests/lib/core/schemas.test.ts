import { leaderSchema } from '../../../lib/core/schemas';

describe('leaderSchema', () => {
  const record = { version: 1, primary: 'node-1', epoch: 3, renewals: 7, reason: 't', changedBy: 'node-1' };

  it('parses a record an older agent wrote with `beat` and `peers`, and keeps neither', () => {
    const peers = { 'node-2': { boot: 'b2', seq: 4, quietMs: 31_000 } };
    const older = { ...record, beat: { boot: 'b1', seq: 12 }, peers };
    const parsed = leaderSchema.parse(older);
    expect(parsed).toEqual({ ...record, previous: null, handover: 'immediate' });
    expect(parsed).not.toHaveProperty('beat');
    expect(parsed).not.toHaveProperty('peers');
  });
});
