import { ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';

/** One object of a listing: key relative to the prefix, S3's Last-Modified in ms (null if absent), size. */
export interface ListedObject {
  key: string;
  lastModified: number | null;
  size: number;
}

/**
 * Every object under `prefix + under` (keys relative to `prefix`), following continuation
 * tokens, with S3's time when it last answered (its `Date` header): ages computed from
 * Last-Modified against it compare S3's clock with itself, never with this machine's. Each page
 * goes through `request` (the store's retries and counts).
 */
export const listPages = async (
  s3: S3Client,
  where: { bucket: string; prefix: string; under: string },
  request: (what: string, send: () => Promise<ListObjectsV2CommandOutput>) => Promise<ListObjectsV2CommandOutput>,
): Promise<{ entries: ListedObject[]; serverNow: number | null }> => {
  const entries: ListedObject[] = [];
  let serverNow: number | null = null;
  let token: string | undefined;
  const full = where.prefix + where.under;
  do {
    const command = new ListObjectsV2Command({ Bucket: where.bucket, Prefix: full, ContinuationToken: token });
    command.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const date = Date.parse((out.response as { headers?: Record<string, string | undefined> }).headers?.date ?? '');
        if (!Number.isNaN(date)) serverNow = date;
        return out;
      },
      { step: 'deserialize', name: 'queenFleetServerDate' },
    );
    const out = await request(`LIST ${full}`, () => s3.send(command));
    for (const o of out.Contents ?? []) {
      if (o.Key !== undefined)
        entries.push({
          key: o.Key.slice(where.prefix.length),
          lastModified: o.LastModified?.getTime() ?? null,
          size: o.Size ?? 0,
        });
    }
    token = out.IsTruncated === true ? out.NextContinuationToken : undefined;
  } while (token !== undefined);
  return { entries, serverNow };
};
