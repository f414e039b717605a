import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  DynamoDBClient,
  DynamoDBServiceException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { WRITE_TOKENS } from '../../lib/aws/write-tokens';

const s3Error = (name: string, status: number): S3ServiceException =>
  new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });

/** How a PUT that was applied then fails: a reset connection, or a 500 after the write. */
export type Loss = 'reset' | 'internal-error';

const ddbError = (name: string, status: number): DynamoDBServiceException =>
  new DynamoDBServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
    message: name,
  });

/**
 * The prefix the handlers' configuration keeps state under: a table item `k` is shown as the object `peer-sync/<k>`.
 */
const PREFIX = 'peer-sync/';

/**
 * An in-memory S3 behind aws-sdk-client-mock with real conditional-write semantics, so handler
 * tests can run concurrent invocations against CAS without a server. `loseNext` makes the next
 * PUTs matching a key apply and then lose their response, as the local cloud's s3LostResponse does.
 * The control table (the lease, lib/aws/table-store.ts) is mocked too, over the same objects:
 * its item `leader.json` is the object `peer-sync/leader.json`, with a version counted per key,
 * so a test seeds, reads, stalls and loses the lease as it does any object.
 */
export class MemoryS3 {
  readonly objects = new Map<string, { body: string; etag: string; metadata?: Record<string, string> }>();
  readonly mock = mockClient(S3Client);
  readonly table = mockClient(DynamoDBClient);
  /** Writes of each key (any path), the version a table item shows. */
  private readonly versions = new Map<string, number>();
  /** Applied PUTs, in order, each with the condition it carried (what a node's policy allows depends on it). */
  puts: { key: string; body: string; condition: 'if-match' | 'if-none-match' | null }[] = [];
  private readonly losses: { match: (key: string) => boolean; how: Loss; meanwhile?: () => Promise<void> }[] = [];

  private readonly refusals: Error[] = [];
  private readonly stalls: { match: (key: string) => boolean; released: Promise<void> }[] = [];

  /** Reads of matching keys hang (a slow S3 path) until the returned function is called. */
  stallReads(match: (key: string) => boolean): () => void {
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.stalls.push({ match, released });
    return release;
  }

  /** The next PUT fails with `error` before anything is applied. */
  failNext(error: Error): void {
    this.refusals.push(error);
  }

  /** The next PUT whose key matches is applied, then answers as `how` says. */
  loseNext(match: (key: string) => boolean, how: Loss = 'reset', meanwhile?: () => Promise<void>): void {
    this.losses.push({ match, how, ...(meanwhile === undefined ? {} : { meanwhile }) });
  }

  constructor() {
    this.mock.reset();
    this.table.reset();
    this.install();
  }

  private bump(key: string): number {
    const v = (this.versions.get(key) ?? 0) + 1;
    this.versions.set(key, v);
    return v;
  }

  private installTable(): void {
    this.table.reset();
    this.table.on(GetItemCommand).callsFake(async (input: { Key: Record<string, { S?: string }> }) => {
      await Promise.resolve();
      const key = PREFIX + (input.Key.k?.S ?? '');
      for (const stall of this.stalls) if (stall.match(key)) await stall.released;
      const o = this.objects.get(key);
      if (o === undefined) return { ConsumedCapacity: { CapacityUnits: 1 } };
      const item: Record<string, AttributeValue> = {
        k: { S: key.slice(PREFIX.length) },
        body: { S: o.body },
        v: { N: String(this.versions.get(key) ?? 1) },
      };
      const tokens = o.metadata?.[WRITE_TOKENS];
      if (tokens !== undefined) item.tokens = { S: tokens };
      return { Item: item, ConsumedCapacity: { CapacityUnits: 1 } };
    });
    this.table
      .on(UpdateItemCommand)
      .callsFake(
        async (input: {
          Key: Record<string, { S?: string }>;
          ConditionExpression?: string;
          ExpressionAttributeValues: Record<string, { S?: string; N?: string }>;
        }) => {
          await Promise.resolve();
          const refusal = this.refusals.shift();
          if (refusal !== undefined) throw refusal;
          const key = PREFIX + (input.Key.k?.S ?? '');
          const existing = this.objects.get(key);
          const version = existing === undefined ? undefined : (this.versions.get(key) ?? 1);
          const c = input.ConditionExpression;
          const holds =
            c === undefined ||
            (c === 'attribute_not_exists(#k)'
              ? existing === undefined
              : c === '#v = :expected'
                ? String(version) === input.ExpressionAttributeValues[':expected']?.N
                : false);
          if (!holds) throw ddbError('ConditionalCheckFailedException', 400);
          const body = input.ExpressionAttributeValues[':b']?.S ?? '';
          const tokens = input.ExpressionAttributeValues[':t']?.S ?? '';
          this.objects.set(key, {
            body,
            etag: `"${createHash('md5').update(body).update(String(this.puts.length)).digest('hex')}"`,
            metadata: { [WRITE_TOKENS]: tokens },
          });
          const v = this.bump(key);
          this.puts.push({
            key,
            body,
            condition: c === undefined ? null : c.includes('not_exists') ? 'if-none-match' : 'if-match',
          });
          const loss = this.losses.findIndex((l) => l.match(key));
          if (loss >= 0) {
            const lost = this.losses.splice(loss, 1)[0];
            await lost?.meanwhile?.();
            if (lost?.how === 'reset') throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
            throw ddbError('InternalServerError', 500);
          }
          return { Attributes: { v: { N: String(v) } }, ConsumedCapacity: { CapacityUnits: 1 } };
        },
      );
  }

  /** The S3 and control-table handlers, again after a test replaced some. */
  install(): void {
    this.installTable();
    const m = this.mock;
    m.on(GetObjectCommand).callsFake(async (input: { Key: string }) => {
      await Promise.resolve();
      for (const stall of this.stalls) if (stall.match(input.Key)) await stall.released;
      const o = this.objects.get(input.Key);
      if (o === undefined) throw s3Error('NoSuchKey', 404);
      return {
        ETag: o.etag,
        ContentLength: Buffer.byteLength(o.body),
        Metadata: o.metadata ?? {},
        Body: { transformToString: () => Promise.resolve(o.body), destroy: () => undefined },
      };
    });
    m.on(HeadObjectCommand).callsFake(async (input: { Key: string }) => {
      await Promise.resolve();
      const o = this.objects.get(input.Key);
      if (o === undefined) throw s3Error('NotFound', 404);
      return { ETag: o.etag, ContentLength: Buffer.byteLength(o.body), Metadata: o.metadata ?? {} };
    });
    m.on(PutObjectCommand).callsFake(
      async (input: {
        Key: string;
        Body: string;
        IfMatch?: string;
        IfNoneMatch?: string;
        Metadata?: Record<string, string>;
      }) => {
        await Promise.resolve();
        const refusal = this.refusals.shift();
        if (refusal !== undefined) throw refusal;
        const existing = this.objects.get(input.Key);
        if (input.IfNoneMatch === '*' && existing !== undefined) throw s3Error('PreconditionFailed', 412);
        if (input.IfMatch !== undefined && existing === undefined) throw s3Error('NoSuchKey', 404);
        if (input.IfMatch !== undefined && existing?.etag !== input.IfMatch) throw s3Error('PreconditionFailed', 412);
        const etag = `"${createHash('md5').update(input.Body).update(String(this.puts.length)).digest('hex')}"`;
        this.objects.set(input.Key, {
          body: input.Body,
          etag,
          ...(input.Metadata === undefined ? {} : { metadata: input.Metadata }),
        });
        this.bump(input.Key);
        this.puts.push({
          key: input.Key,
          body: input.Body,
          condition:
            input.IfMatch !== undefined ? 'if-match' : input.IfNoneMatch !== undefined ? 'if-none-match' : null,
        });
        const loss = this.losses.findIndex((l) => l.match(input.Key));
        if (loss >= 0) {
          const lost = this.losses.splice(loss, 1)[0];
          // Others may write on top before the writer hears of its failure.
          await lost?.meanwhile?.();
          const how = lost?.how;
          if (how === 'reset') throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
          throw new S3ServiceException({
            name: 'InternalError',
            $fault: 'server',
            $metadata: { httpStatusCode: 500 },
            message: 'We encountered an internal error. Please try again.',
          });
        }
        return { ETag: etag };
      },
    );
    m.on(ListObjectsV2Command).callsFake((input: { Prefix?: string }) => ({
      Contents: [...this.objects.keys()].filter((k) => k.startsWith(input.Prefix ?? '')).map((Key) => ({ Key })),
      IsTruncated: false,
    }));
  }

  /** Restores the real S3 and DynamoDB clients. */
  restore(): void {
    this.mock.restore();
    this.table.restore();
  }

  set(key: string, value: unknown): void {
    const body = typeof value === 'string' ? value : JSON.stringify(value);
    this.objects.set(key, { body, etag: `"${createHash('md5').update(body).digest('hex')}"` });
    this.bump(key);
  }

  json(key: string): unknown {
    const o = this.objects.get(key);
    return o === undefined ? undefined : JSON.parse(o.body);
  }
}
