import fc from 'fast-check';
import { byPayload, MAX_PAYLOAD_BYTES } from '../../../lib/aws/intake';

describe('byPayload', () => {
  it('keeps every message, in order, in batches within SQS 1 MiB batch limit (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: MAX_PAYLOAD_BYTES }), { maxLength: 10 }), (sizes) => {
        const messages = sizes.map((n, i) => ({ Body: 'x'.repeat(n), i }));
        const batches = byPayload(messages);
        expect(batches.flat().map((m) => m.i)).toEqual(messages.map((m) => m.i));
        for (const b of batches) {
          expect(b.length).toBeGreaterThan(0);
          expect(b.reduce((sum, m) => sum + m.Body.length, 0)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
        }
      }),
      { numRuns: 50 },
    );
  });
});
