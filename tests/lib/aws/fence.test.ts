import { PutObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { guardWrites } from '../../../lib/aws/fence';
import { FencedError } from '../../../lib/core/errors';

/** An S3 client whose wire is a function: every attempt it makes is recorded. */
/** What the SDK hands its HTTP handler, as far as these tests look. */
interface Sent {
  method: string;
}

const wired = (answer: (req: Sent, attempt: number) => number): { client: S3Client; attempts: Sent[] } => {
  const attempts: Sent[] = [];
  const client = new S3Client({
    region: 'us-west-2',
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
    maxAttempts: 3,
    requestHandler: {
      handle: async (req: Sent) => {
        attempts.push(req);
        const status = answer(req, attempts.length);
        const body = status === 200 ? '' : '<Error><Code>InternalError</Code><Message>x</Message></Error>';
        // The SDK takes any object of HttpResponse's shape.
        return Promise.resolve({
          response: {
            statusCode: status,
            headers: { etag: '"e"', 'content-type': 'application/xml' },
            body: Readable.from([Buffer.from(body)]),
          },
        });
      },
    },
  });
  return { client, attempts };
};

describe('guardWrites', () => {
  it('refuses a retry that comes due after the lease lapsed, so a woken zombie sends nothing', async () => {
    let valid = true;
    // The first attempt fails (a 500); while the SDK waits to retry, the lease lapses.
    const { client, attempts } = wired((_req, n) => {
      if (n === 1) valid = false;
      return n === 1 ? 500 : 200;
    });
    guardWrites(client, () => valid, 'node-1');
    await expect(client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: '{}' }))).rejects.toBeInstanceOf(
      FencedError,
    );
    expect(attempts).toHaveLength(1);
  });

  it('lets reads through without a lease, and writes with one', async () => {
    const { client, attempts } = wired(() => 200);
    let valid = false;
    guardWrites(client, () => valid, 'node-1');
    await client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
    await expect(client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: '{}' }))).rejects.toBeInstanceOf(
      FencedError,
    );
    valid = true;
    await client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: '{}' }));
    expect(attempts.map((a) => a.method)).toEqual(['GET', 'PUT']);
  });
});
