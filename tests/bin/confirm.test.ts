import { PassThrough } from 'node:stream';
import { confirm, mustAsk } from '../../bin/commands/confirm';

const ask = async (typed: string | null): Promise<{ agreed: boolean; shown: string }> => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const answer = confirm('Move the primary role? [y/N] ', input, output);
  if (typed === null) input.end();
  else input.write(typed);
  return { agreed: await answer, shown };
};

describe('the failover prompt', () => {
  it.each([
    ['y\n', true],
    ['YES\n', true],
    [' yes \n', true],
    ['n\n', false],
    ['\n', false],
    ['yep\n', false],
  ])('answer %j agrees: %p', async (typed, agreed) => {
    const out = await ask(typed);
    expect(out).toEqual({ agreed, shown: 'Move the primary role? [y/N] ' });
  });

  it('refuses when the input ends unanswered', async () => {
    expect((await ask(null)).agreed).toBe(false);
  });

  it('asks only a person at a terminal, without --yes or --force, about a real change', () => {
    const base = { terminal: true, yes: false, dryRun: false, json: false };
    expect(mustAsk(base)).toBe(true);
    expect(mustAsk({ ...base, terminal: false })).toBe(false);
    expect(mustAsk({ ...base, yes: true })).toBe(false);
    expect(mustAsk({ ...base, dryRun: true })).toBe(false);
    expect(mustAsk({ ...base, json: true })).toBe(false);
  });
});
