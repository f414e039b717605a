import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { NotFoundError, OversizedError } from '../core/errors';
import { toFleetError } from './errors';
import { WRITE_TOKENS } from './write-tokens';

export interface Got {
  text: string;
  etag: string;
  /** The object's write-token chain (write-tokens.ts). */
  tokens: string | undefined;
}

const oversized = (key: string, size: number, etag: string | undefined, maxBytes: number): OversizedError =>
  new OversizedError(`${key}: ${size} bytes exceeds the limit of ${maxBytes}`, key, etag ?? '', size);

/**
 * One GET of an object's text, with an optional If-None-Match: `unchanged` on 304, null when absent.
 * Refused above `maxBytes`, by its Content-Length or, when a proxy or a fake sends none, as read.
 */
export const getText = async (
  s3: S3Client,
  req: { bucket: string; key: string; maxBytes: number; ifNoneMatch?: string },
): Promise<Got | 'unchanged' | null> => {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: req.bucket, Key: req.key, IfNoneMatch: req.ifNoneMatch }));
    const size = out.ContentLength ?? 0;
    if (size > req.maxBytes) {
      (out.Body as { destroy?: () => void } | undefined)?.destroy?.();
      throw oversized(req.key, size, out.ETag, req.maxBytes);
    }
    const text = (await out.Body?.transformToString('utf8')) ?? '';
    const read = Buffer.byteLength(text);
    if (out.ContentLength === undefined && read > req.maxBytes) throw oversized(req.key, read, out.ETag, req.maxBytes);
    return { text, etag: out.ETag ?? '', tokens: out.Metadata?.[WRITE_TOKENS] };
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 304) return 'unchanged';
    if (toFleetError(error, req.key) instanceof NotFoundError) return null;
    throw error;
  }
};

/** The first `maxBytes` of an object's text, unvalidated; null when absent. */
export const getHead = async (
  s3: S3Client,
  req: { bucket: string; key: string; maxBytes: number },
): Promise<string | null> => {
  try {
    const range = `bytes=0-${req.maxBytes - 1}`;
    const out = await s3.send(new GetObjectCommand({ Bucket: req.bucket, Key: req.key, Range: range }));
    return (await out.Body?.transformToString('utf8')) ?? '';
  } catch (error) {
    if (toFleetError(error, req.key) instanceof NotFoundError) return null;
    throw error;
  }
};
