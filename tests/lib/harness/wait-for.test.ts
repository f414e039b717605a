import { loaded, waitFor } from '../../helpers/systemd-node';

/** The container test's waits: sized for a loaded machine, and a timeout says what it waited for and saw last. */
describe('waitFor (tests/helpers/systemd-node.ts)', () => {
  it('names what it waited for and what the probe saw last when it times out', async () => {
    let n = 0;
    const probe = (saw: (s: string) => void): undefined => void saw(`a heartbeat with ${++n} sample(s)`);
    await expect(waitFor('a second heartbeat', 50, probe, 10)).rejects.toThrow(
      /^timed out after 0\.05 s waiting for a second heartbeat; saw last a heartbeat with \d+ sample\(s\)$/,
    );
  });

  it('takes a failed look as seen and looks again, instead of failing at once', async () => {
    let n = 0;
    const flaky = (): string | undefined => {
      if (++n < 3) throw new Error('ECONNRESET');
      return 'found';
    };
    await expect(waitFor('a read', 1_000, flaky, 1)).resolves.toBe('found');
    await expect(waitFor('a read', 20, () => Promise.reject(new Error('ECONNRESET')), 5)).rejects.toThrow(
      /saw last an error: Error: ECONNRESET$/,
    );
  });

  it('gives a loaded machine several times the idle wait', () => {
    expect(loaded(20_000)).toBeGreaterThanOrEqual(60_000);
  });
});
