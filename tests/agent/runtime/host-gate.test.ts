import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HOST_GATE, passHostGate } from '../../../agent/runtime/clock';

/**
 * A process that passes the gate, then says so and stays. As in the worker, nothing else keeps
 * it alive while it waits: its IPC channel is unref'd (listenForClockSkew) and no loop has started.
 */
const gatedChild = (dir: string): string => {
  const file = join(dir, 'child.ts');
  const clock = resolve(__dirname, '../../../agent/runtime/clock');
  writeFileSync(
    file,
    `import { listenForClockSkew, passHostGate } from ${JSON.stringify(clock)};\n` +
      `listenForClockSkew();\n` +
      `process.on('exit', () => process.stderr.write('exited at the gate\\n'));\n` +
      `void passHostGate('taken-up').then(() => { process.removeAllListeners('exit'); ` +
      `process.send?.({ type: 'went' }); setInterval(() => {}, 1000); });\n`,
  );
  return file;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('passHostGate', () => {
  let dir: string;
  let child: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-host-gate-'));
  });
  afterEach(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: NodeJS.ProcessEnv): { messages: string[]; child: ChildProcess } => {
    const messages: string[] = [];
    child = fork(gatedChild(dir), [], {
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.on('message', (m: { type: string }) => messages.push(m.type));
    return { messages, child };
  };
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    const end = Date.now() + 15_000;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };

  it('waits for the host’s go-ahead however late it comes (a loaded host answered after more than 1 s)', async () => {
    const { messages, child: c } = start({ [HOST_GATE]: '1' });
    await until('the child to reach the gate', () => messages.includes('taken-up'));
    // A host slower than the old 1 s limit: the child must still be waiting.
    await sleep(2_500);
    expect(messages).not.toContain('went');
    // Still there, waiting (its event loop held open by nothing else).
    expect({ exitCode: c.exitCode, signal: c.signalCode }).toEqual({ exitCode: null, signal: null });
    c.send({ type: 'go', step: 'taken-up' });
    await until('the child to go on', () => messages.includes('went'));
  }, 30_000);

  it('goes on at once without a node host (production, or a test runner’s worker pool)', async () => {
    const { messages } = start({});
    await until('the child to go on', () => messages.includes('went'));
    expect(messages).not.toContain('taken-up');
  }, 30_000);

  it('is a no-op in this process, which has no host gate set', async () => {
    await expect(passHostGate('taken-up')).resolves.toBeUndefined();
  });
});
