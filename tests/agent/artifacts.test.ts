import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { TaskRunner, type TaskEvents } from '../../agent/worker/task-runner';
import { ArtifactStore, BadArtifactError } from '../../lib/aws/artifacts';
import { TaskQueue } from '../../lib/aws/queue';
import { StateStore } from '../../lib/aws/state-store';
import { buildConfig } from '../../lib/core/config';
import { checkpointSchema } from '../../lib/core/schemas';
import { killAll, startCloudProcess, type LocalCloudInfo } from '../helpers/children';
import { memoryLogger } from '../helpers/memory-logger';

const quiet: TaskEvents = {
  resumed: () => undefined,
  progress: () => undefined,
  checkpointed: () => undefined,
  done: () => undefined,
};
const never = (): AbortSignal => new AbortController().signal;

describe('stage artifacts on the local cloud', () => {
  let cloud: LocalCloudInfo;
  let s3: S3Client;
  let sqs: SQSClient;
  beforeAll(async () => {
    cloud = await startCloudProcess();
    const options = {
      region: cloud.region,
      endpoint: cloud.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    s3 = new S3Client({ ...options, forcePathStyle: true });
    sqs = new SQSClient(options);
  });
  afterAll(async () => {
    s3.destroy();
    sqs.destroy();
    await killAll();
  });

  const store = (): ArtifactStore =>
    new ArtifactStore(s3, { bucket: cloud.bucket, prefix: 'peer-sync/', partSizeBytes: 5 * 1024 * 1024 });

  it('uploads a folder, large files in parts, and brings it back byte for byte, checked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qf-art-up-'));
    mkdirSync(join(dir, 'hls'));
    const big = randomBytes(12 * 1024 * 1024 + 17);
    writeFileSync(join(dir, 'hls', 'seg-0001.ts'), big);
    writeFileSync(join(dir, 'index.m3u8'), '#EXTM3U\n');
    const files = await store().upload('t-up', 'transcode', 'e3-aaaa', dir);
    expect(files.map((f) => [f.path, f.size])).toEqual([
      ['hls/seg-0001.ts', big.length],
      ['index.m3u8', 8],
    ]);
    expect(files[0]?.key).toBe('artifacts/t-up/transcode/e3-aaaa/hls/seg-0001.ts');
    const into = mkdtempSync(join(tmpdir(), 'qf-art-down-'));
    await store().download('transcode', files, into);
    expect(readFileSync(join(into, 'hls', 'seg-0001.ts')).equals(big)).toBe(true);
    expect(readFileSync(join(into, 'index.m3u8'), 'utf8')).toBe('#EXTM3U\n');
  });

  it('refuses an artifact whose bytes changed, or that is gone, naming the stage that made it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qf-art-up-'));
    writeFileSync(join(dir, 'a.bin'), randomBytes(1000));
    const files = await store().upload('t-bad', 'titling', 'e3-bbbb', dir);
    const key = `peer-sync/${files[0]?.key ?? ''}`;
    await s3.send(new PutObjectCommand({ Bucket: cloud.bucket, Key: key, Body: randomBytes(1000) }));
    const into = mkdtempSync(join(tmpdir(), 'qf-art-down-'));
    await expect(store().download('titling', files, into)).rejects.toThrow(BadArtifactError);
    expect(existsSync(join(into, 'a.bin'))).toBe(false);
    await s3.send(new DeleteObjectCommand({ Bucket: cloud.bucket, Key: key }));
    await expect(store().download('titling', files, into)).rejects.toMatchObject({ stage: 'titling' });
  });

  describe('a task that moves to another node between two stages', () => {
    const source = randomBytes(6 * 1024 * 1024 + 3);
    let sourceFile: string;
    let seen: string;
    const pipeline = () => [
      // Counts its runs beside the task, then writes a copy of the source as its artifact.
      {
        name: 'produce',
        command: ['/bin/sh', '-c', `echo run >> "${seen}/produce-runs"; cp "${sourceFile}" "$OUTPUT_DIR/clip.bin"`],
      },
      { name: 'consume', command: ['/bin/sh', '-c', `cp "$INPUT_DIR/produce/clip.bin" "${seen}/received.bin"`] },
    ];
    const runnerOn = (node: string) => {
      const config = {
        ...buildConfig({}, { pipeline: pipeline() }),
        nodeName: node,
        dataDir: mkdtempSync(join(tmpdir(), `qf-art-${node}-`)),
      };
      const state = new StateStore(s3, { bucket: cloud.bucket, prefix: 'peer-sync/', maxObjectBytes: 1 << 20 });
      const logger = memoryLogger();
      const queue = new TaskQueue(sqs, cloud.queueUrl);
      const runner = new TaskRunner({
        config,
        store: state,
        queue,
        log: logger.log,
        now: Date.now,
        guard: () => undefined,
        deadline: never,
        artifacts: store(),
      });
      return { runner, state, logger };
    };
    const message = { id: 'm-1', receiptHandle: 'not-a-receipt', body: '{"taskId":"t-move"}', receiveCount: 1 };
    beforeEach(() => {
      seen = mkdtempSync(join(tmpdir(), 'qf-art-seen-'));
      sourceFile = join(seen, 'source.bin');
      writeFileSync(sourceFile, source);
    });

    /** node-1 runs the first stage and stops (drained), as a primary does before a failover. */
    const firstStageOnNode1 = async (taskId: string) => {
      const drained = new AbortController();
      drained.abort();
      const { runner, state } = runnerOn('node-1');
      expect(
        await runner.run(
          { taskId },
          { ...message, body: JSON.stringify({ taskId }) },
          3,
          never(),
          drained.signal,
          quiet,
        ),
      ).toBe('aborted');
      const cp = await state.read(`tasks/${taskId}/checkpoint.json`, checkpointSchema);
      return cp?.value.artifacts?.['produce'] ?? [];
    };

    it("gives the next stage on the other node the first stage's bytes, downloaded and checked", async () => {
      const files = await firstStageOnNode1('t-move');
      expect(files).toEqual([expect.objectContaining({ path: 'clip.bin', size: source.length })]);
      const { runner } = runnerOn('node-2');
      // The delete of a receipt that is not one fails once the task is done: the transfer is what is tested.
      await runner.run({ taskId: 't-move' }, message, 4, never(), never(), quiet).catch(() => undefined);
      expect(readFileSync(join(seen, 'received.bin')).equals(source)).toBe(true);
      expect(readFileSync(join(seen, 'produce-runs'), 'utf8')).toBe('run\n');
    });

    it(
      'runs a stage again on the other node when its ' + 'artifact was corrupted, and passes nothing corrupt on',
      async () => {
        const files = await firstStageOnNode1('t-corrupt');
        await s3.send(
          new PutObjectCommand({
            Bucket: cloud.bucket,
            Key: `peer-sync/${files[0]?.key ?? ''}`,
            Body: randomBytes(source.length),
          }),
        );
        const { runner, state, logger } = runnerOn('node-2');
        await runner
          .run({ taskId: 't-corrupt' }, { ...message, body: '{"taskId":"t-corrupt"}' }, 4, never(), never(), quiet)
          .catch(() => undefined);
        expect(readFileSync(join(seen, 'received.bin')).equals(source)).toBe(true);
        expect(readFileSync(join(seen, 'produce-runs'), 'utf8')).toBe('run\nrun\n');
        expect(logger.text()).toContain('an artifact is missing or corrupt: its stage runs again');
        // The checkpoint names the new upload, under the epoch that made it.
        const cp = await state.read('tasks/t-corrupt/checkpoint.json', checkpointSchema);
        expect(cp?.value.artifacts?.['produce']?.[0]?.key).toMatch(/^artifacts\/t-corrupt\/produce\/e4-/);
      },
    );
  });
});
