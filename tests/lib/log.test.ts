import fc from 'fast-check';
import { createLogger, withLogFields } from '../../lib/log';

/** A logger as the functions make it, writing into memory. */
const memory = () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('t', {}, 'info', {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { log, lines };
};

describe('withLogFields', () => {
  it(
    'puts its fields on every line written meanwhile, ' +
      'through awaits and children, nested fields on top, and none outside',
    async () => {
      const { log, lines } = memory();
      const child = log.child({ part: 'x' });
      await withLogFields({ requestId: 'req-1', incidentId: undefined }, async () => {
        log.info('first');
        await new Promise((r) => setTimeout(r, 5));
        child.warn('after a timer');
        await withLogFields({ incidentId: 'node-1-e3-i1' }, async () => {
          await Promise.resolve();
          log.error('in the incident');
        });
        log.info('after the incident');
      });
      log.info('outside');
      expect(lines.map((l) => [l.msg, l.requestId, l.incidentId])).toEqual([
        ['first', 'req-1', undefined],
        ['after a timer', 'req-1', undefined],
        ['in the incident', 'req-1', 'node-1-e3-i1'],
        ['after the incident', 'req-1', undefined],
        ['outside', undefined, undefined],
      ]);
      expect(lines.every((l) => !('incidentId' in l) || l.incidentId !== undefined)).toBe(true);
    },
  );

  it('keeps concurrent invocations apart: each line names the request it was written for', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }), {
          minLength: 2,
          maxLength: 5,
        }),
        async (runs) => {
          const { log, lines } = memory();
          await Promise.all(
            runs.map((delays, i) =>
              withLogFields({ requestId: `req-${i}` }, async () => {
                for (const ms of delays) {
                  await new Promise((r) => setTimeout(r, ms));
                  log.info({ run: i }, 'step');
                }
              }),
            ),
          );
          expect(lines).toHaveLength(runs.flat().length);
          for (const l of lines) expect(l.requestId).toBe(`req-${String(l.run)}`);
        },
      ),
      { numRuns: 30 },
    );
  });
});
