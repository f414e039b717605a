import { parseInterval, watch } from '../../bin/commands/watch';

describe('fleet status --watch', () => {
  it('shows a round at once and then every interval, until stopped', async () => {
    const stop = new AbortController();
    const writes: string[] = [];
    let round = 0;
    const render = (): Promise<string> => {
      round++;
      if (round === 3) stop.abort();
      return Promise.resolve(`round ${round}`);
    };
    await watch(render, { everyMs: 10, terminal: false, signal: stop.signal, write: (t) => writes.push(t) });
    expect(writes).toEqual(['round 1\n', 'round 2\n', 'round 3\n']);
  });

  it('clears the screen on a terminal, and shows a failed round without stopping', async () => {
    const stop = new AbortController();
    const writes: string[] = [];
    let round = 0;
    const render = (): Promise<string> => {
      round++;
      if (round === 2) stop.abort();
      return round === 1 ? Promise.reject(new Error('bucket unreachable')) : Promise.resolve('ok');
    };
    await watch(render, { everyMs: 10, terminal: true, signal: stop.signal, write: (t) => writes.push(t) });
    expect(writes).toEqual(['\x1b[2J\x1b[Hfleet: bucket unreachable\n', '\x1b[2J\x1b[Hok\n']);
  });

  it('stops within the interval it is waiting in', async () => {
    const stop = new AbortController();
    const started = Date.now();
    setTimeout(() => stop.abort(), 50);
    await watch(() => Promise.resolve(''), { everyMs: 60_000, terminal: false, signal: stop.signal, write: () => 0 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each(['0', '0.5', '3601', 'soon', ''])('refuses an interval of %j', (raw) => {
    expect(() => parseInterval(raw)).toThrow(/--watch: must be 1 to 3600 seconds/);
  });
});
