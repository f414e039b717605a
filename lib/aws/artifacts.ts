import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { FleetError, NotFoundError } from '../core/errors';
import { KEYS } from '../core/keys';
import type { Artifact } from '../core/schemas';
import { toFleetError } from './errors';

/** An artifact a stage cannot use: missing in S3, or not the bytes its checkpoint names. Its stage runs again. */
export class BadArtifactError extends FleetError {
  constructor(
    message: string,
    readonly stage: string,
  ) {
    super(message);
  }
}

/** SHA-256 of a file, hex: what the checkpoint names an artifact by. */
export const sha256OfFile = async (file: string): Promise<string> => {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
};

/** Every regular file below `dir`, as paths relative to it with `/` separators, sorted. */
export const filesBelow = async (dir: string): Promise<string[]> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
};

/**
 * A stage's artifacts in S3: its OUTPUT_DIR uploaded under a key of its own attempt
 * (`artifacts/<task>/<stage>/<attempt tag>/`), so no upload ever replaces another; the checkpoint,
 * written by CAS under the epoch, says which set is the stage's. Large files go up in parts
 * (lib-storage); every file is named by its size and SHA-256, checked again when it comes down.
 */
export class ArtifactStore {
  constructor(
    private readonly s3: S3Client,
    private readonly options: { bucket: string; prefix: string; partSizeBytes?: number },
  ) {}

  /** Uploads every file below `dir`; the records name each one. */
  async upload(taskId: string, stage: string, tag: string, dir: string, signal?: AbortSignal): Promise<Artifact[]> {
    const out: Artifact[] = [];
    for (const path of await filesBelow(dir)) {
      const file = join(dir, path);
      const [sha256, { size }] = await Promise.all([sha256OfFile(file), stat(file)]);
      const key = KEYS.artifact(taskId, stage, tag, path);
      const upload = new Upload({
        client: this.s3,
        params: {
          Bucket: this.options.bucket,
          Key: this.options.prefix + key,
          Body: createReadStream(file),
          ContentLength: size,
        },
        partSize: this.options.partSizeBytes ?? 8 * 1024 * 1024,
        queueSize: 2,
        leavePartsOnError: false,
      });
      const abort = (): void => void upload.abort();
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await upload.done();
      } catch (error) {
        throw toFleetError(error, `S3 upload ${key}`);
      } finally {
        signal?.removeEventListener('abort', abort);
      }
      out.push({ path, key, size, sha256 });
    }
    return out;
  }

  /**
   * Brings `stage`'s artifacts into `dir`, each checked against its record: one missing in S3, or
   * whose bytes differ, is a BadArtifactError (the stage must run again). A file already there
   * with the recorded size and checksum is kept.
   */
  async download(stage: string, artifacts: readonly Artifact[], dir: string, signal?: AbortSignal): Promise<void> {
    for (const a of artifacts) {
      const file = join(dir, ...a.path.split('/'));
      if (await matches(file, a)) continue;
      await mkdir(dirname(file), { recursive: true });
      const part = `${file}.part`;
      let body: Readable;
      try {
        const got = await this.s3.send(
          new GetObjectCommand({ Bucket: this.options.bucket, Key: this.options.prefix + a.key }),
          { abortSignal: signal },
        );
        body = got.Body as Readable;
      } catch (error) {
        const e = toFleetError(error, `S3 GET ${a.key}`);
        if (e instanceof NotFoundError)
          throw new BadArtifactError(`${stage}: artifact ${a.path} is missing (${a.key})`, stage);
        throw e;
      }
      const hash = createHash('sha256');
      let size = 0;
      const tee = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      try {
        await pipeline(body, tee, createWriteStream(part), { signal });
      } catch (error) {
        await rm(part, { force: true });
        throw toFleetError(error, `S3 GET ${a.key}`);
      }
      const sha256 = hash.digest('hex');
      if (size !== a.size || sha256 !== a.sha256) {
        await rm(part, { force: true });
        throw new BadArtifactError(
          `${stage}: artifact ${a.path} is not what was uploaded (${size} bytes, sha256 ${sha256.slice(0, 12)}…)`,
          stage,
        );
      }
      await rename(part, file);
    }
  }
}

/** True when `file` holds the artifact's bytes (size first: a checksum only when it could match). */
const matches = async (file: string, a: Artifact): Promise<boolean> => {
  try {
    if ((await stat(file)).size !== a.size) return false;
  } catch {
    return false;
  }
  return (await sha256OfFile(file)) === a.sha256;
};
