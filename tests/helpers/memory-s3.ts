import { createHash } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';

const s3Error = (name: string, status: number): S3ServiceException =>
  new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });

/**
 * An in-memory S3 behind aws-sdk-client-mock with real conditional-write semantics, so handler
 * tests can run concurrent invocations against CAS without a server.
 */
export class MemoryS3 {
  readonly objects = new Map<string, { body: string; etag: string }>();
  readonly mock = mockClient(S3Client);
  puts: { key: string; body: string }[] = [];

  constructor() {
    this.mock.reset();
    this.install();
  }

  install(): void {
    const m = this.mock;
    m.on(GetObjectCommand).callsFake(async (input: { Key: string }) => {
      await Promise.resolve();
      const o = this.objects.get(input.Key);
      if (o === undefined) throw s3Error('NoSuchKey', 404);
      return { ETag: o.etag, ContentLength: Buffer.byteLength(o.body), Body: { transformToString: () => Promise.resolve(o.body), destroy: () => undefined } };
    });
    m.on(PutObjectCommand).callsFake(async (input: { Key: string; Body: string; IfMatch?: string; IfNoneMatch?: string }) => {
      await Promise.resolve();
      const existing = this.objects.get(input.Key);
      if (input.IfNoneMatch === '*' && existing !== undefined) throw s3Error('PreconditionFailed', 412);
      if (input.IfMatch !== undefined && existing === undefined) throw s3Error('NoSuchKey', 404);
      if (input.IfMatch !== undefined && existing?.etag !== input.IfMatch) throw s3Error('PreconditionFailed', 412);
      const etag = `"${createHash('md5').update(input.Body).update(String(this.puts.length)).digest('hex')}"`;
      this.objects.set(input.Key, { body: input.Body, etag });
      this.puts.push({ key: input.Key, body: input.Body });
      return { ETag: etag };
    });
    m.on(ListObjectsV2Command).callsFake((input: { Prefix?: string }) => ({
      Contents: [...this.objects.keys()].filter((k) => k.startsWith(input.Prefix ?? '')).map((Key) => ({ Key })),
      IsTruncated: false,
    }));
  }

  set(key: string, value: unknown): void {
    const body = typeof value === 'string' ? value : JSON.stringify(value);
    this.objects.set(key, { body, etag: `"${createHash('md5').update(body).digest('hex')}"` });
  }

  json(key: string): unknown {
    const o = this.objects.get(key);
    return o === undefined ? undefined : JSON.parse(o.body);
  }
}
