#!/usr/bin/env node
// The reference media pipeline's stages (docs/pipeline.md): node stage.mjs <stage>.
// transcode: the source to H.264/AAC as an HLS rendition; titling: the payload's title burnt in;
// metadata: ffprobe's JSON and the payload's shot list; delivery: the rendition and its metadata
// to a bucket or a folder, never over a different file.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';

const env = (name) => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set: run me as a fleet stage`);
  return value;
};
const selfTest = process.env.SELF_TEST === '1';
const task = JSON.parse(await readFile(env('TASK_FILE'), 'utf8'));
const payload = task.payload ?? {};
const out = env('OUTPUT_DIR');
const input = (stage) => join(env('INPUT_DIR'), stage);

/** Runs a tool; its stderr goes to ours (the worker's log), and a failure exits with its status. */
const run = (file, args, onLine = () => undefined) =>
  new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let rest = '';
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    child.once('error', (error) =>
      reject(new Error(`${file}: ${error.message} (is ffmpeg installed? apt-get install ffmpeg)`)),
    );
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${code ?? signal}`)),
    );
  });

/** Seconds of media in a file, from ffprobe: what `-progress` is measured against. */
const durationOf = async (file) => {
  let text = '';
  await run(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=nw=1:nk=1', file],
    (l) => (text += l),
  );
  const seconds = Number(text.trim());
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
};

/** ffmpeg with its machine-readable progress turned into the fleet's progress lines. */
const ffmpeg = async (args, duration) => {
  let last = -1;
  await run(
    'ffmpeg',
    ['-nostdin', '-hide_banner', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-y', ...args],
    (line) => {
      const m = /^out_time_us=(\d+)$/.exec(line);
      if (m === null || duration === null) return;
      const fraction = Math.min(1, Number(m[1]) / 1e6 / duration);
      if (fraction - last >= 0.01) console.log(`progress ${fraction.toFixed(3)}`);
      last = fraction;
    },
  );
};

/**
 * The HLS rendition every stage hands on: 2-second segments and a VOD playlist. A segment can
 * only start on a keyframe, so one is forced every 2 s (x264 would place them 10 s apart).
 */
const hls = (dir) => [
  ...['-force_key_frames', 'expr:gte(t,n_forced*2)'],
  ...['-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod'],
  ...['-hls_segment_filename', join(dir, 'seg-%04d.ts'), join(dir, 'index.m3u8')],
];

/** A second of test pattern and tone: the self-test's source, made here, never downloaded. */
const sample = async () => {
  const file = join(out, 'sample.mp4');
  await run('ffmpeg', [
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x90:rate=10:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=duration=1',
    '-shortest',
    file,
  ]);
  return file;
};

const stages = {
  async transcode() {
    const source = selfTest ? await sample() : payload.source;
    if (typeof source !== 'string') throw new Error('payload.source must name the file or URL to transcode');
    await mkdir(join(out, 'hls'), { recursive: true });
    const codecs = [
      '-map',
      '0:v:0',
      '-map',
      '0:a:0?',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
    ];
    await ffmpeg(['-i', source, ...codecs, ...hls(join(out, 'hls'))], await durationOf(source));
  },
  async titling() {
    const rendition = join(input('transcode'), 'hls', 'index.m3u8');
    const title = selfTest ? 'self-test' : String(payload.title ?? task.taskId);
    // textfile=, not text=: a title needs no escaping for the filter graph.
    const titleFile = join(out, 'title.txt');
    await writeFile(titleFile, title);
    await mkdir(join(out, 'hls'), { recursive: true });
    const draw =
      `drawtext=textfile=${titleFile}:fontcolor=white:fontsize=h/12:box=1:boxcolor=black@0.5` +
      ":x=(w-tw)/2:y=h-2*th:enable='lt(t,5)'";
    const codecs = ['-vf', draw, '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'copy'];
    await ffmpeg(['-i', rendition, ...codecs, ...hls(join(out, 'hls'))], await durationOf(rendition));
  },
  async metadata() {
    let json = '';
    await run(
      'ffprobe',
      [
        '-v',
        'error',
        '-print_format',
        'json',
        '-show_format',
        '-show_streams',
        join(input('titling'), 'hls', 'index.m3u8'),
      ],
      (l) => (json += `${l}\n`),
    );
    const probe = JSON.parse(json);
    const doc = { taskId: task.taskId, title: payload.title ?? null, shots: payload.shots ?? [], probe };
    await writeFile(join(out, 'metadata.json'), `${JSON.stringify(doc, null, 2)}\n`);
    console.log('progress 1');
  },
  async delivery() {
    const files = [
      ...(await readdir(join(input('titling'), 'hls'))).map((f) => [join(input('titling'), 'hls', f), `hls/${f}`]),
      [join(input('metadata'), 'metadata.json'), 'metadata.json'],
    ];
    const target = payload.delivery ?? {};
    let deliver;
    if (selfTest) deliver = toFolder(join(out, 'self-test-delivery'));
    else if (typeof target.bucket === 'string') deliver = await toBucket(target);
    else if (typeof target.dir === 'string') deliver = toFolder(target.dir);
    else throw new Error('payload.delivery must name a bucket (and a prefix) or a dir');
    for (const [i, [from, name]] of files.entries()) {
      await deliver(from, `${task.taskId}/${name}`);
      console.log(`progress ${((i + 1) / files.length).toFixed(3)}`);
    }
  },
};

/**
 * Delivery to a folder: copies a file unless its destination exists, a conditional write as
 * S3's If-None-Match. A delivery run again after a failover finds its files there and goes on;
 * a different file of the same name is never replaced: that fails the stage, for an operator.
 */
const toFolder = (dir) => async (from, name) => {
  const dest = join(dir, name);
  await mkdir(dirname(dest), { recursive: true });
  try {
    await copyFile(from, dest, 1 /* COPYFILE_EXCL */);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    const [a, b] = await Promise.all([readFile(from), readFile(dest)]);
    if (!a.equals(b)) throw new Error(`${dest} exists with other content: not replaced`);
  }
};

const TYPES = { '.m3u8': 'application/vnd.apple.mpegurl', '.ts': 'video/mp2t', '.json': 'application/json' };

/**
 * Delivery to `bucket` under `prefix` (a CDN origin's), with the same rule through S3's
 * conditional write: PutObject If-None-Match: *, and on 412 the existing object's ETag (a
 * single PUT's MD5) compared with the file's. Needs @aws-sdk/client-s3 beside this script.
 */
const toBucket = async ({ bucket, prefix = '' }) => {
  let sdk;
  try {
    sdk = await import('@aws-sdk/client-s3');
  } catch {
    throw new Error('delivery to a bucket needs the AWS SDK: npm install @aws-sdk/client-s3 (beside stage.mjs)');
  }
  // A custom endpoint (AWS_ENDPOINT_URL_S3: MinIO, a local cloud) takes path-style addresses.
  const s3 = new sdk.S3Client({ forcePathStyle: process.env.AWS_ENDPOINT_URL_S3 !== undefined });
  return async (from, name) => {
    const body = await readFile(from);
    const key = `${prefix}${name}`;
    const md5 = createHash('md5').update(body).digest('hex');
    const type = TYPES[extname(name)] ?? 'application/octet-stream';
    for (let tries = 1; ; tries++) {
      try {
        await s3.send(
          new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: type, IfNoneMatch: '*' }),
        );
        return;
      } catch (error) {
        const status = error.$metadata?.httpStatusCode;
        // 409: a conditional write raced another write of the key; S3 asks for a retry, later.
        if (status === 409 && tries < 6) {
          await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
          continue;
        }
        if (status !== 412) throw error;
        const head = await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
        if (head.ETag !== `"${md5}"`) throw new Error(`s3://${bucket}/${key} exists with other content: not replaced`);
        return;
      }
    }
  };
};

const name = process.argv[2];
const stage = stages[name];
if (stage === undefined) {
  console.error(`usage: stage.mjs ${Object.keys(stages).join('|')}`);
  process.exit(64);
}
try {
  await stage();
  // What this stage hands on, for the log.
  const size = async (dir) => (await readdir(dir, { recursive: true })).length;
  console.log(`${name}: done, ${await size(out)} files`);
} catch (error) {
  console.error(`${name}: ${error.message}`);
  process.exit(1);
}
