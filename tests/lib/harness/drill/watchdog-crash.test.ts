import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunCommand } from '../../../../lib/aws/run-command';
import { WATCHDOG_TIMEOUT_SECONDS } from '../../../../lib/harness/drill/setup';
import { WatchdogCrash } from '../../../../lib/harness/drill/watchdog-crash';

/** The watchdog-crash fault: only a claimed restart's send is struck, and only while the fault lasts. */
const commands = (): { run: RunCommand; sent: string[] } => {
  const sent: string[] = [];
  const run = {
    send: (_id: string, command: string) => {
      sent.push(command);
      return Promise.resolve(`cmd-${sent.length}`);
    },
    result: () => Promise.resolve({ status: 'succeeded', detail: 'ok' }),
  } as unknown as RunCommand;
  return { run, sent };
};

const MI_1 = { name: 'node-1', instanceId: 'mi-1' };
const MI_2 = { name: 'node-2', instanceId: 'mi-2' };

describe('WatchdogCrash', () => {
  it('kills a run at the send of a restart while it lasts, and lets every other command through', async () => {
    const { run, sent } = commands();
    const struck: string[] = [];
    let hung = 0;
    const crash = new WatchdogCrash(
      () => {
        hung++;
        return new Promise<never>(() => undefined);
      },
      (id, command) => struck.push(`${id} ${command}`),
    );
    const wrapped = crash.wrap(run);
    await expect(wrapped.send(MI_1, 'restartWorker', 'queen-fleet i-1')).resolves.toBe('cmd-1');
    crash.active = true;
    let settled = false;
    void wrapped.send(MI_1, 'restartWorker', 'queen-fleet i-2').finally(() => (settled = true));
    void wrapped.send(MI_2, 'restartAgent', 'queen-fleet i-3').finally(() => (settled = true));
    // A failover's stop is not a claimed restart: it goes.
    await expect(wrapped.send(MI_1, 'stopWorker', 'queen-fleet i-4')).resolves.toBe('cmd-2');
    await expect(wrapped.result('cmd-2', MI_1)).resolves.toMatchObject({ status: 'succeeded' });
    await new Promise((r) => setImmediate(r));
    expect({ settled, hung, struck: crash.struck }).toEqual({ settled: false, hung: 2, struck: 2 });
    expect(struck).toEqual(['mi-1 restartWorker', 'mi-2 restartAgent']);
    crash.active = false;
    await expect(wrapped.send(MI_1, 'restartWorker', 'queen-fleet i-5')).resolves.toBe('cmd-3');
    expect(sent).toEqual(['restartWorker', 'stopWorker', 'restartWorker']);
  });

  it('ends a dead run at the watchdog function timeout serverless.yml gives it', () => {
    const yml = readFileSync(join(__dirname, '../../../../serverless.yml'), 'utf8');
    const watchdog = yml.slice(yml.indexOf('\n  watchdog:'), yml.indexOf('\n  notifier:'));
    expect(Number(/\n {4}timeout: (\d+)/.exec(watchdog)?.[1])).toBe(WATCHDOG_TIMEOUT_SECONDS);
  });
});
