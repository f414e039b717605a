import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { killAll, ROOT, startCloudProcess, type LocalCloudInfo } from '../helpers/children';

const run = promisify(execFile);
const STAGE = join(ROOT, 'examples/ffmpeg/stage.mjs');

/**
 * The reference pipeline's delivery stage against S3 (the local cloud): a conditional write per
 * file, so a delivery run again goes on, and a different file of the same name is never replaced.
 * It needs no ffmpeg: its inputs are written here.
 */
describe('examples/ffmpeg delivery to a bucket', () => {
  let cloud: LocalCloudInfo;
  let s3: S3Client;
  beforeAll(async () => {
    cloud = await startCloudProcess();
    const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
    s3 = new S3Client({ region: cloud.region, endpoint: cloud.endpoint, credentials, forcePathStyle: true });
  });
  afterAll(async () => {
    s3.destroy();
    await killAll();
  });

  /** A task's folder with titling's and metadata's artifacts, as the worker lays it out. */
  const taskDir = (): { task: string; inputs: string; out: string } => {
    const dir = mkdtempSync(join(tmpdir(), 'qf-deliver-'));
    const inputs = join(dir, 'stages');
    mkdirSync(join(inputs, 'titling', 'hls'), { recursive: true });
    mkdirSync(join(inputs, 'metadata'), { recursive: true });
    mkdirSync(join(inputs, 'delivery'));
    writeFileSync(join(inputs, 'titling', 'hls', 'index.m3u8'), '#EXTM3U\n#EXT-X-ENDLIST\n');
    writeFileSync(join(inputs, 'titling', 'hls', 'seg-0000.ts'), Buffer.alloc(4096, 7));
    writeFileSync(join(inputs, 'metadata', 'metadata.json'), '{"taskId":"ep-1"}\n');
    const task = join(dir, 'task.json');
    const delivery = { bucket: cloud.bucket, prefix: 'cdn-origin/' };
    writeFileSync(task, JSON.stringify({ taskId: 'ep-1', payload: { delivery } }));
    return { task, inputs, out: join(inputs, 'delivery') };
  };

  const deliver = (t: { task: string; inputs: string; out: string }) =>
    run('node', [STAGE, 'delivery'], {
      env: {
        PATH: process.env.PATH,
        TASK_FILE: t.task,
        TASK_ID: 'ep-1',
        STAGE: 'delivery',
        ATTEMPT: '1',
        INPUT_DIR: t.inputs,
        OUTPUT_DIR: t.out,
        AWS_ENDPOINT_URL_S3: cloud.endpoint,
        AWS_REGION: cloud.region,
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
    });

  const body = async (key: string): Promise<string> => {
    const got = await s3.send(new GetObjectCommand({ Bucket: cloud.bucket, Key: key }));
    return (await got.Body?.transformToString()) ?? '';
  };

  it('writes each file once, goes on when run again, and never replaces a different file', async () => {
    const t = taskDir();
    const first = await deliver(t);
    expect(first.stdout).toContain('progress 1.000');
    expect(await body('cdn-origin/ep-1/hls/index.m3u8')).toBe('#EXTM3U\n#EXT-X-ENDLIST\n');
    expect(await body('cdn-origin/ep-1/metadata.json')).toBe('{"taskId":"ep-1"}\n');
    // Run again, as after a failover: the same files are there already.
    await expect(deliver(t)).resolves.toMatchObject({ stdout: expect.stringContaining('delivery: done') });
    // Another rendition of the same name is refused, and the delivered one kept.
    writeFileSync(join(t.inputs, 'titling', 'hls', 'index.m3u8'), '#EXTM3U\n#other\n');
    await expect(deliver(t)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('exists with other content: not replaced'),
    });
    expect(await body('cdn-origin/ep-1/hls/index.m3u8')).toBe('#EXTM3U\n#EXT-X-ENDLIST\n');
  });
});
