import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proofPath, proofSchema, readJsonFile } from '../../agent/registry';
import { selfTest } from '../../agent/worker/self-test';
import { buildConfig } from '../../lib/core/config';
import { memoryLogger } from '../helpers/memory-logger';

const script = (dir: string, name: string, body: string): string => {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
};

describe('selfTest', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-self-test-'));
  });
  const config = (stageCommands?: Record<string, string[]>) => ({
    ...buildConfig({}, stageCommands === undefined ? {} : { stageCommands }),
    dataDir: dir,
  });

  it('passes through the built-in stages and writes a passing proof, naming the worker that ran it', async () => {
    const proof = await selfTest(config(), 2_000, memoryLogger().log, '4242:123456');
    expect(proof).toMatchObject({ ok: true, worker: '4242:123456' });
    expect(await readJsonFile(proofPath(dir), proofSchema)).toEqual(proof);
  });

  it('runs the configured stage commands, and a command that fails fails the proof', async () => {
    const ok = script(dir, 'ok.sh', 'echo progress 0.5; : > "$OUTPUT_FILE"');
    const broken = script(dir, 'broken.sh', 'exit 3');
    expect(
      (
        await selfTest(
          config({ transcode: [ok], titling: [ok], metadata: [ok], delivery: [ok] }),
          5_000,
          memoryLogger().log,
        )
      ).ok,
    ).toBe(true);
    const logger = memoryLogger();
    const failed = await selfTest(config({ transcode: [ok], titling: [broken] }), 5_000, logger.log);
    expect(failed).toMatchObject({ ok: false, detail: expect.stringContaining('titling') });
    expect(logger.text()).toContain('not a ready standby');
  });

  it('runs a pipeline with SELF_TEST=1 on the sample task, each stage reading the one before', async () => {
    const first = script(
      dir,
      'first.sh',
      '[ "$SELF_TEST" = 1 ] && grep -q selfTest "$TASK_FILE" && echo sample > "$OUTPUT_DIR/clip"',
    );
    const second = script(dir, 'second.sh', 'grep -q sample "$INPUT_DIR/first/clip"');
    const pipeline = [
      { name: 'first', command: [first] },
      { name: 'second', command: [second] },
    ];
    expect((await selfTest({ ...buildConfig({}, { pipeline }), dataDir: dir }, 5_000, memoryLogger().log)).ok).toBe(
      true,
    );
    const reversed = [
      { name: 'second', command: [second] },
      { name: 'first', command: [first] },
    ];
    expect(
      (await selfTest({ ...buildConfig({}, { pipeline: reversed }), dataDir: dir }, 5_000, memoryLogger().log)).ok,
    ).toBe(false);
  });

  it('fails when a stage does not finish in time: a wedged stage is no proof', async () => {
    const hangs = script(dir, 'hangs.sh', 'exec sleep 30');
    const started = Date.now();
    const proof = await selfTest(config({ transcode: [hangs] }), 300, memoryLogger().log);
    expect(proof.ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
