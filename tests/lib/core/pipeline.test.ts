import fc from 'fast-check';
import { buildConfig } from '../../../lib/core/config';
import { parseProgressLine, pipelineOf, SEED_STAGES } from '../../../lib/core/pipeline';
import { taskMessageSchema, workSecondsOf } from '../../../lib/core/schemas';

describe('pipeline', () => {
  it("is the seed's four synthetic stages by default, and stageCommands fills in their commands", () => {
    expect(pipelineOf(buildConfig({})).map((s) => [s.name, s.command])).toEqual(SEED_STAGES.map((n) => [n, undefined]));
    const short = pipelineOf(buildConfig({}, { stageCommands: { titling: ['/opt/title'] } }));
    expect(short.map((s) => s.command)).toEqual([undefined, ['/opt/title'], undefined, undefined]);
  });

  it(
    'refuses duplicate stage names, both forms at once, ' + 'and a hang limit past the stall window, naming the field',
    () => {
      const cmd = ['/bin/true'];
      expect(() =>
        buildConfig(
          {},
          {
            pipeline: [
              { name: 'a', command: cmd },
              { name: 'a', command: cmd },
            ],
          },
        ),
      ).toThrow(/pipeline\.1\.name: duplicate stage name a/);
      expect(() =>
        buildConfig({}, { pipeline: [{ name: 'a', command: cmd }], stageCommands: { transcode: cmd } }),
      ).toThrow(/stageCommands: is a shorthand for pipeline/);
      expect(() => buildConfig({}, { pipeline: [{ name: 'a', command: cmd, hangSeconds: 600 }] })).toThrow(
        /pipeline\.0\.hangSeconds/,
      );
      expect(() => buildConfig({}, { pipeline: [{ name: 'Transcode!', command: cmd }] })).toThrow(/pipeline\.0\.name/);
    },
  );

  it('is read from the environment as JSON', () => {
    const config = buildConfig({
      FLEET_PIPELINE: JSON.stringify([
        { name: 'probe', command: ['ffprobe', '-v', 'error'], timeoutSeconds: 60, retries: 2 },
      ]),
    });
    expect(config.pipeline).toEqual([
      { name: 'probe', command: ['ffprobe', '-v', 'error'], timeoutSeconds: 60, retries: 2 },
    ]);
  });
});

describe('parseProgressLine', () => {
  it('reads a fraction and an optional token, and nothing else (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.option(fc.stringMatching(/^[\x21-\x7e]{1,40}$/), { nil: undefined }),
        (fraction, token) => {
          const line = `progress ${fraction}${token === undefined ? '' : ` ${token}`}`;
          expect(parseProgressLine(line)).toEqual(token === undefined ? { fraction } : { fraction, token });
        },
      ),
    );
  });

  it('takes any other line for a log line', () => {
    for (const line of [
      'progress',
      'progress 1.5',
      'progress -0.1',
      'progress half',
      'frame=96 fps=24',
      'progress 0.5 a b',
      ' progress 0.5',
    ]) {
      expect(parseProgressLine(line)).toBeNull();
    }
  });
});

describe('task message', () => {
  it("keeps every field a producer sent, and reads earlier releases' messages", () => {
    const body = {
      taskId: 't-1',
      payload: { source: 's3://media/a.mov', nested: { deep: [1, null] } },
      producer: 'cms',
    };
    expect(taskMessageSchema.parse(body)).toEqual(body);
    const old = taskMessageSchema.parse({ taskId: 't-2', episode: 'episode-4', workSeconds: 3 });
    expect(workSecondsOf(old)).toBe(3);
    expect(workSecondsOf(taskMessageSchema.parse({ taskId: 't-3', payload: { workSeconds: 2 } }))).toBe(2);
    expect(workSecondsOf(taskMessageSchema.parse(body))).toBe(0);
  });

  it('refuses a body without a valid taskId or with a payload that is no object', () => {
    expect(taskMessageSchema.safeParse({ payload: {} }).success).toBe(false);
    expect(taskMessageSchema.safeParse({ taskId: '../etc', payload: {} }).success).toBe(false);
    expect(taskMessageSchema.safeParse({ taskId: 't-1', payload: [1] }).success).toBe(false);
  });
});
