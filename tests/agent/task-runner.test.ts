import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import pino from 'pino';
import { TaskRunner, type TaskEvents } from '../../agent/worker/task-runner';
import { StaleEpochError } from '../../agent/worker/task-records';
import { TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { FencedError } from '../../lib/core/errors';
import { MemoryS3 } from '../helpers/memory-s3';
import { memoryLogger } from '../helpers/memory-logger';
import { StageFailedError, StageTempFailError } from '../../agent/worker/stages';
import { taskMessageSchema } from '../../lib/core/schemas';

const sqs = mockClient(SQSClient);
const message = { id: 'm-1', receiptHandle: 'rh-1', body: '', receiveCount: 1 };
const quiet: TaskEvents = {
  resumed: () => undefined,
  progress: () => undefined,
  checkpointed: () => undefined,
  done: () => undefined,
};

describe('TaskRunner', () => {
  let s3: MemoryS3;
  let runner: TaskRunner;
  /** The lease as the worker sees it: tests fence it mid-task. */
  let fenced: boolean;
  beforeEach(() => {
    fenced = false;
    sqs.reset();
    sqs.on(DeleteMessageCommand).resolves({});
    s3 = new MemoryS3();
    const config = { ...buildConfig({}), nodeName: 'node-2', dataDir: mkdtempSync(join(tmpdir(), 'qf-runner-')) };
    runner = new TaskRunner({
      config,
      store: new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      }),
      queue: new TaskQueue(new SQSClient({ region: 'us-west-2' }), 'http://q'),
      log: pino({ level: 'silent' }),
      now: () => 1_000,
      guard: () => {
        if (fenced) throw new FencedError('fenced');
      },
      deadline: () => new AbortController().signal,
    });
  });
  afterAll(() => {
    sqs.restore();
    s3.restore();
  });
  const signals = (): [AbortSignal, AbortSignal] => [new AbortController().signal, new AbortController().signal];

  it('checkpoints every stage, creates done.json, and only then deletes the message', async () => {
    const outcome = await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 3, ...signals(), quiet);
    expect(outcome).toBe('done');
    const keys = s3.puts.map((p) => p.key);
    expect(keys.filter((k) => k.endsWith('checkpoint.json'))).toHaveLength(4);
    expect(keys.at(-1)).toBe('peer-sync/tasks/t1/done.json');
    expect(keys.indexOf('peer-sync/outputs/t1/delivery.json')).toBeLessThan(
      keys.lastIndexOf('peer-sync/tasks/t1/checkpoint.json'),
    );
    expect(s3.json('peer-sync/tasks/t1/done.json')).toMatchObject({ node: 'node-2', epoch: 3 });
    expect(sqs).toHaveReceivedCommandTimes(DeleteMessageCommand, 1);
  });

  it('resumes after the last checkpoint instead of the first stage', async () => {
    s3.set('peer-sync/tasks/t1/checkpoint.json', {
      version: 1,
      taskId: 't1',
      stages: 2,
      epoch: 3,
      node: 'node-1',
      outputs: {},
    });
    const resumed: number[] = [];
    await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 4, ...signals(), {
      ...quiet,
      resumed: (f: number) => resumed.push(f),
    });
    expect(resumed).toEqual([2]);
    expect(s3.puts.some((p) => p.key === 'peer-sync/outputs/t1/transcode.json')).toBe(false);
    expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).toMatchObject({ stages: 4, epoch: 4, node: 'node-2' });
  });

  it('refuses to work under an older epoch than the one that checkpointed', async () => {
    s3.set('peer-sync/tasks/t1/checkpoint.json', {
      version: 1,
      taskId: 't1',
      stages: 1,
      epoch: 5,
      node: 'node-1',
      outputs: {},
    });
    await expect(
      runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 4, ...signals(), quiet),
    ).rejects.toBeInstanceOf(StaleEpochError);
    expect(s3.puts).toEqual([]);
    expect(sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
  });

  it('writes every task object conditionally: outputs and done.json created, checkpoints by CAS', async () => {
    await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 3, ...signals(), quiet);
    const how = (part: string): (string | null)[] => [
      ...new Set(s3.puts.filter((p) => p.key.includes(part)).map((p) => p.condition)),
    ];
    expect(how('/outputs/')).toEqual(['if-none-match']);
    expect(how('done.json')).toEqual(['if-none-match']);
    expect(how('checkpoint.json')).toEqual(['if-none-match', 'if-match']);
  });

  it("replaces a repeated stage's output by CAS, naming the epoch that repeated it", async () => {
    s3.set('peer-sync/outputs/t1/transcode.json', { taskId: 't1', stage: 'transcode', node: 'node-1', epoch: 3 });
    await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 4, ...signals(), quiet);
    expect(s3.json('peer-sync/outputs/t1/transcode.json')).toEqual({
      taskId: 't1',
      stage: 'transcode',
      node: 'node-2',
      epoch: 4,
    });
    expect(s3.puts.filter((p) => p.key === 'peer-sync/outputs/t1/transcode.json').map((p) => p.condition)).toEqual([
      'if-match',
    ]);
  });

  it('refuses to replace an output a newer epoch wrote, and goes no further', async () => {
    const newer = { taskId: 't1', stage: 'transcode', node: 'node-1', epoch: 5 };
    s3.set('peer-sync/outputs/t1/transcode.json', newer);
    await expect(
      runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 4, ...signals(), quiet),
    ).rejects.toBeInstanceOf(StaleEpochError);
    expect(s3.json('peer-sync/outputs/t1/transcode.json')).toEqual(newer);
    expect(s3.puts).toEqual([]);
    expect(sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
  });

  it('skips a task whose done.json exists and deletes its message', async () => {
    s3.set('peer-sync/tasks/t1/done.json', { version: 1, taskId: 't1', node: 'node-1', epoch: 2, finishedAt: 5 });
    expect(await runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 3, ...signals(), quiet)).toBe('already-done');
    expect(s3.puts).toEqual([]);
    expect(sqs).toHaveReceivedCommandTimes(DeleteMessageCommand, 1);
  });

  it('stops after checkpointing the current stage when draining', async () => {
    const drain = new AbortController();
    drain.abort();
    expect(
      await runner.run(
        { taskId: 't1', workSeconds: 0.02 },
        message,
        3,
        new AbortController().signal,
        drain.signal,
        quiet,
      ),
    ).toBe('aborted');
    expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).toMatchObject({ stages: 1 });
    expect(sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
  });

  it('writes and acknowledges nothing once its lease lapsed mid-task (a frozen primary that woke up)', async () => {
    let progressed = 0;
    const events: TaskEvents = {
      ...quiet,
      progress: () => {
        // The lease lapses while the first stage runs, as when the whole node froze past it.
        if (++progressed === 3) fenced = true;
      },
    };
    await expect(
      runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 3, ...signals(), events),
    ).rejects.toBeInstanceOf(FencedError);
    expect(s3.puts).toEqual([]);
    expect(sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
  });

  it('does not even acknowledge a task found done once fenced', async () => {
    s3.set('peer-sync/tasks/t1/done.json', { version: 1, taskId: 't1', node: 'node-1', epoch: 2, finishedAt: 5 });
    fenced = true;
    await expect(
      runner.run({ taskId: 't1', workSeconds: 0.02 }, message, 3, ...signals(), quiet),
    ).rejects.toBeInstanceOf(FencedError);
    expect(sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
  });
});

describe('TaskRunner › a pipeline of commands (docs/pipeline.md)', () => {
  const sh = (script: string): string[] => ['/bin/sh', '-c', script];
  let s3: MemoryS3;
  let seen: string;
  const runnerWith = (pipeline: { name: string; command: string[]; retries?: number }[]) => {
    sqs.reset();
    sqs.on(DeleteMessageCommand).resolves({});
    s3 = new MemoryS3();
    seen = mkdtempSync(join(tmpdir(), 'qf-seen-'));
    const config = {
      ...buildConfig({}, { pipeline }),
      nodeName: 'node-2',
      dataDir: mkdtempSync(join(tmpdir(), 'qf-runner-')),
    };
    const logger = memoryLogger();
    const runner = new TaskRunner({
      config,
      store: new StateStore(new S3Client({ region: 'us-west-2' }), {
        bucket: 'b',
        prefix: 'peer-sync/',
        maxObjectBytes: 1 << 20,
      }),
      queue: new TaskQueue(new SQSClient({ region: 'us-west-2' }), 'http://q'),
      log: logger.log,
      now: () => 1_000,
      guard: () => undefined,
      deadline: () => new AbortController().signal,
    });
    return { runner, config, logger };
  };
  afterAll(() => {
    s3.restore();
    delete process.env['SEEN'];
  });
  const signals = (): [AbortSignal, AbortSignal] => [new AbortController().signal, new AbortController().signal];

  it(
    'hands every stage the message byte for byte, ' +
      "fields the fleet does not know included, and each earlier stage's folder",
    async () => {
      const { runner } = runnerWith([
        { name: 'probe', command: sh('echo probed > "$OUTPUT_DIR/probe.txt"') },
        {
          name: 'pack',
          command: sh(
            `cp "$TASK_FILE" ${'"$SEEN"'}/task.json && cp ` +
              `"$INPUT_DIR/probe/probe.txt" "$SEEN/" && echo "$ATTEMPT" > "$SEEN/attempt"`,
          ),
        },
      ]);
      process.env['SEEN'] = seen;
      const body =
        '{"taskId":"t1", "payload": {"source": "s3://media/ep 4.mov", "title": ' +
        '"Épisode 4 — \\"Ré\\"", "shots": [[0, 12.5]], "x-own": null}, "producer": "cms-7"}';
      const task = taskMessageSchema.parse(JSON.parse(body));
      expect(await runner.run(task, { ...message, body }, 3, ...signals(), quiet)).toBe('done');
      expect(readFileSync(join(seen, 'task.json'), 'utf8')).toBe(body);
      expect(readFileSync(join(seen, 'probe.txt'), 'utf8')).toBe('probed\n');
      expect(readFileSync(join(seen, 'attempt'), 'utf8')).toBe('1\n');
      expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).toMatchObject({ stages: 2, of: 2, stage: 'pack' });
    },
  );

  it(
    'gives the next attempt the resume token the last one reported, ' +
      'on this node (retries) and after the task came back',
    async () => {
      // Fails its first two attempts after reporting a token; the third records what it was given.
      const script =
        'echo "$ATTEMPT:${RESUME_TOKEN:-none}" >> "$SEEN/given"; ' +
        '[ "$ATTEMPT" -ge 3 ] && exit 0; echo "progress 0.5 seg-$ATTEMPT"; exit 1';
      const { runner } = runnerWith([{ name: 'transcode', command: sh(script), retries: 1 }]);
      process.env['SEEN'] = seen;
      const task = { taskId: 't1' };
      await expect(runner.run(task, message, 3, ...signals(), quiet)).rejects.toBeInstanceOf(StageFailedError);
      expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).toMatchObject({
        stages: 0,
        next: { stage: 'transcode', attempts: 2, token: 'seg-2' },
      });
      expect(await runner.run(task, message, 3, ...signals(), quiet)).toBe('done');
      expect(readFileSync(join(seen, 'given'), 'utf8').trim().split('\n')).toEqual(['1:none', '2:seg-1', '3:seg-2']);
      expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).not.toHaveProperty('next');
    },
  );

  it("logs a stage's stdout and stderr lines with its task, stage and attempt", async () => {
    const { runner, logger } = runnerWith([
      { name: 'transcode', command: sh('echo "frame=96 fps=24"; echo "[aac @ 0x1] too many bits" >&2') },
    ]);
    await runner.run({ taskId: 't1' }, message, 3, ...signals(), quiet);
    const lines = logger.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        taskId: 't1',
        stage: 'transcode',
        attempt: 1,
        stream: 'stdout',
        msg: 'frame=96 fps=24',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        taskId: 't1',
        stage: 'transcode',
        attempt: 1,
        stream: 'stderr',
        msg: '[aac @ 0x1] too many bits',
      }),
    );
  });

  it('records an exit 75 as an attempt that counted no failure: the error says to try later', async () => {
    const { runner } = runnerWith([{ name: 'deliver', command: sh('exit 75'), retries: 3 }]);
    await expect(runner.run({ taskId: 't1' }, message, 3, ...signals(), quiet)).rejects.toBeInstanceOf(
      StageTempFailError,
    );
    // No retry on this node: 75 means later, not now.
    expect(s3.json('peer-sync/tasks/t1/checkpoint.json')).toMatchObject({ next: { stage: 'deliver', attempts: 1 } });
  });
});
