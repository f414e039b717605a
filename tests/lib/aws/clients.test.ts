import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory, rotatingFileCredentials, SHARED_FILE_TRUST_MS } from '../../../lib/aws/clients';

const credentialsFile = (dir: string, key: string): string => {
  const file = join(dir, 'credentials');
  writeFileSync(file, `[default]\naws_access_key_id = ${key}\naws_secret_access_key = secret-${key}\naws_session_token = token-${key}\n`);
  return file;
};

describe('ClientFactory', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-creds-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('rotatingFileCredentials', () => {
    it('reads the rotated keys on every call, each with a bounded trust', async () => {
      const file = credentialsFile(dir, 'AKIAFIRST');
      const provide = rotatingFileCredentials(file, () => 1_000);
      await expect(provide()).resolves.toEqual({ accessKeyId: 'AKIAFIRST', secretAccessKey: 'secret-AKIAFIRST', sessionToken: 'token-AKIAFIRST', expiration: new Date(1_000 + SHARED_FILE_TRUST_MS) });
      credentialsFile(dir, 'AKIASECOND');
      await expect(provide()).resolves.toMatchObject({ accessKeyId: 'AKIASECOND', sessionToken: 'token-AKIASECOND' });
    });
  });

  it('keeps the last good keys for a moment when the file is caught mid-rewrite', async () => {
    const file = credentialsFile(dir, 'AKIAGOOD');
    const provide = rotatingFileCredentials(file, () => 1_000);
    await provide();
    writeFileSync(file, '');
    const during = await provide();
    expect(during).toMatchObject({ accessKeyId: 'AKIAGOOD' });
    expect((during.expiration?.getTime() ?? 0) - 1_000).toBeLessThan(SHARED_FILE_TRUST_MS);
    credentialsFile(dir, 'AKIANEXT');
    await expect(provide()).resolves.toMatchObject({ accessKeyId: 'AKIANEXT' });
  });

  it('fails when the file was never readable', async () => {
    await expect(rotatingFileCredentials(join(dir, 'missing'))()).rejects.toThrow();
  });

  it('reads the shared credentials file named by AWS_SHARED_CREDENTIALS_FILE with an expiry, so the SDK reads it again', async () => {
    const file = credentialsFile(dir, 'AKIANODE');
    const s3 = new ClientFactory({ region: 'us-west-2' }, { AWS_SHARED_CREDENTIALS_FILE: file }).s3();
    const first = await s3.config.credentials();
    expect(first).toMatchObject({ accessKeyId: 'AKIANODE' });
    expect(first.expiration).toBeInstanceOf(Date);
  });

  it('leaves keys in the environment their usual precedence over the shared file', async () => {
    const file = credentialsFile(dir, 'AKIAFILE');
    const env = { AWS_SHARED_CREDENTIALS_FILE: file, AWS_ACCESS_KEY_ID: 'AKIAENV', AWS_SECRET_ACCESS_KEY: 'secret' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const creds = await new ClientFactory({ region: 'us-west-2' }, env).s3().config.credentials();
      expect(creds.accessKeyId).toBe('AKIAENV');
    } finally {
      process.env = saved;
    }
  });

  it('sends every service to one endpoint when given one, with path-style S3', async () => {
    const clients = new ClientFactory({ region: 'us-west-2', endpoint: 'http://127.0.0.1:4566', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }, {});
    expect(clients.s3().config.forcePathStyle).toBe(true);
    const endpoint = await clients.sqs().config.endpoint?.();
    expect(endpoint).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    clients.destroy();
  });
});
