import { execFile, spawnSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ValidationError } from '../../core/errors';
import type { Delivery } from '../../core/drill/report-types';
import type { MediaSpec } from '../../core/drill/scenario';

const run = promisify(execFile);

/** What a media drill needs on the machine, and how to get it. */
export const FFMPEG_HINT = 'install it with `sudo apt-get install ffmpeg` (Debian, Ubuntu) or `brew install ffmpeg`';

/** Refuses at once, naming the install command, on a machine without ffmpeg and ffprobe. */
export const requireFfmpeg = (): void => {
  for (const tool of ['ffmpeg', 'ffprobe']) {
    const probe = spawnSync(tool, ['-version'], { stdio: 'ignore' });
    if (probe.error !== undefined || probe.status !== 0)
      throw new ValidationError(`${tool} is not installed: ${FFMPEG_HINT}`, 'media');
  }
};

interface Probe {
  format?: { duration?: string };
  streams?: { codec_type?: string; codec_name?: string; nb_read_packets?: string }[];
}

/** What is wrong with a rendition of a `seconds` long source, as ffprobe read it. */
const problemsOf = (probe: Probe, seconds: number): string[] => {
  const stream = (type: string) => probe.streams?.find((s) => s.codec_type === type);
  const length = Number(probe.format?.duration);
  const frames = Number(stream('video')?.nb_read_packets ?? 0);
  return [
    ...(stream('video')?.codec_name === 'h264' ? [] : [`video ${stream('video')?.codec_name ?? 'none'}, not h264`]),
    ...(stream('audio')?.codec_name === 'aac' ? [] : [`audio ${stream('audio')?.codec_name ?? 'none'}, not aac`]),
    ...(Math.abs(length - seconds) <= 2 ? [] : [`${String(length)} s long, not ${String(seconds)} s`]),
    ...(frames >= 25 * seconds - 1 ? [] : [`${String(frames)} video frames, not ${String(25 * seconds)}`]),
  ];
};

/** Bytes sent per write: small enough that a paced source arrives evenly. */
const CHUNK = 16 * 1024;

/**
 * A media drill's sources: `episodes` test clips made with ffmpeg's lavfi sources (pattern and
 * tone, MPEG-TS), served from 127.0.0.1 at the speed of playback in scenario time, so a transcode
 * lasts as long as its episode. A read from the start that passes the middle of a file is noted;
 * the first such read of a `stall` episode stops there with its connection open (ffprobe's
 * probe reads about 7 s of media: a stalled episode longer than 14 s stalls the transcode).
 */
export class MediaShelf {
  private server: Server | undefined;
  private port = 0;
  private readonly files = new Map<string, Buffer>();
  private readonly stalled = new Set<number>();
  private readonly open = new Set<ServerResponse>();
  /** Reads from the start not yet through, by episode: the transcodes under way. */
  private readonly through = new Map<ServerResponse, number>();
  /** A response passed the middle of a source: its episode. */
  onHalf: ((episode: number, stalled: boolean) => void) | undefined;

  constructor(
    private readonly dir: string,
    private readonly spec: MediaSpec,
    private readonly timeScale: number,
  ) {}

  /** Episode `n`'s length (from 1). */
  private secondsOf(n: number): number {
    const s = this.spec.seconds;
    return typeof s === 'number' ? s : (s[n - 1] ?? 0);
  }

  get deliveryDir(): string {
    return join(this.dir, 'delivery');
  }

  /** Makes the sources and starts serving them. */
  async start(): Promise<void> {
    requireFfmpeg();
    await mkdir(this.deliveryDir, { recursive: true });
    for (let n = 1; n <= this.spec.episodes; n++) {
      const file = join(this.dir, `ep-${n}.ts`);
      const s = String(this.secondsOf(n));
      const video = `testsrc2=size=320x180:rate=25:duration=${s}`;
      const audio = `sine=frequency=${220 * n}:duration=${s}`;
      const codecs = ['-c:v', 'mpeg2video', '-q:v', '6', '-c:a', 'mp2', '-f', 'mpegts'];
      await run('ffmpeg', [
        '-nostdin',
        '-loglevel',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        video,
        '-f',
        'lavfi',
        '-i',
        audio,
        ...codecs,
        file,
      ]);
      this.files.set(`/ep-${n}.ts`, await readFile(file));
    }
    const server = createServer((req, res) => this.serve(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    this.port = typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** The episodes being read from the start now, in order: a fault's moment, in words. */
  readingNow(): string {
    const eps = [...new Set(this.through.values())].sort((a, b) => a - b);
    return eps.length === 0 ? 'no source being read' : `reading ${eps.map((e) => `ep-${e}`).join(', ')}`;
  }

  /** The payload with `{source}`, `{episode}` and `{delivery}` filled in for message `index` (from 0). */
  payloadFor(payload: Record<string, unknown>, index: number): Record<string, unknown> {
    const episode = String((index % this.spec.episodes) + 1);
    const source = `http://127.0.0.1:${String(this.port)}/ep-${episode}.ts`;
    const fill = (v: unknown): unknown => {
      if (typeof v === 'string')
        return v
          .replaceAll('{source}', source)
          .replaceAll('{episode}', episode)
          .replaceAll('{delivery}', this.deliveryDir);
      if (Array.isArray(v)) return v.map(fill);
      if (typeof v === 'object' && v !== null)
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
      return v;
    };
    return fill(payload) as Record<string, unknown>;
  }

  /** A byte range from `start` (an HTTP Range of `bytes=N-`, which ffprobe asks to seek), paced. */
  private serve(req: IncomingMessage, res: ServerResponse): void {
    const body = this.files.get(req.url ?? '');
    if (body === undefined || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    const episode = Number(/(\d+)/.exec(req.url ?? '')?.[1]);
    const range = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
    const start = Math.min(body.length, Number(range?.[1] ?? 0));
    const headers = {
      'content-type': 'video/mp2t',
      'accept-ranges': 'bytes',
      'content-length': String(body.length - start),
    };
    if (range === null) res.writeHead(200, headers);
    else res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
    this.open.add(res);
    if (start === 0) this.through.set(res, episode);
    res.once('close', () => {
      this.open.delete(res);
      this.through.delete(res);
    });
    // Playback speed in scenario time: the whole file over its seconds, divided by the time scale.
    const everyMs = (CHUNK / body.length) * ((this.secondsOf(episode) * 1000) / this.timeScale);
    const middle = Math.floor(body.length / 2);
    let at = start;
    const next = (): void => {
      if (res.destroyed) return;
      if (at >= body.length) {
        this.through.delete(res);
        res.end();
        return;
      }
      const end = Math.min(body.length, at + CHUNK);
      // Only a read from the start: a probe's seeks toward the end are not a reader going through.
      if (start === 0 && at < middle && end >= middle) {
        const stall = this.spec.stall.includes(episode) && !this.stalled.has(episode);
        if (stall) this.stalled.add(episode);
        this.onHalf?.(episode, stall);
        // A real hang: the connection stays open and nothing more comes, until the reader gives up.
        if (stall) return void res.write(body.subarray(at, middle));
      }
      res.write(body.subarray(at, end));
      at = end;
      setTimeout(next, everyMs);
    };
    next();
  }

  /**
   * Checks each task's delivered rendition with ffprobe, every segment read (`-count_packets`):
   * an H.264 video and an AAC audio stream, as long as its source within a segment, with a frame
   * for each 25th of a second of it.
   */
  async verify(taskIds: readonly string[]): Promise<Delivery[]> {
    const out: Delivery[] = [];
    for (const [i, taskId] of taskIds.entries()) {
      const seconds = this.secondsOf((i % this.spec.episodes) + 1);
      const playlist = join(this.deliveryDir, taskId, 'hls', 'index.m3u8');
      try {
        const entries = 'format=duration:stream=codec_type,codec_name,nb_read_packets';
        const args = ['-v', 'error', '-count_packets', '-print_format', 'json', '-show_entries', entries, playlist];
        const probe = JSON.parse((await run('ffprobe', args)).stdout) as Probe;
        const problems = problemsOf(probe, seconds);
        const detail =
          problems.length === 0 ? `h264/aac, ${Number(probe.format?.duration).toFixed(1)} s` : problems.join('; ');
        out.push({ taskId, ok: problems.length === 0, detail });
      } catch (error) {
        const why = (error as Error).message.split('\n')[0] ?? '';
        out.push({ taskId, ok: false, detail: `no valid rendition at ${playlist}: ${why}` });
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
