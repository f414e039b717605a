import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ClientFactory, rotatingFileCredentials, SHARED_FILE_TRUST_MS } from '../../../lib/aws/clients';

const credentialsFile = (dir: string, key: string): string => {
  const file = join(dir, 'credentials');
  writeFileSync(
    file,
    `[default]\naws_access_key_id = ${key}\naws_secret_access_key = secret-${key}\naws_session_token = token-${key}\n`,
  );
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
      await expect(provide()).resolves.toEqual({
        accessKeyId: 'AKIAFIRST',
        secretAccessKey: 'secret-AKIAFIRST',
        sessionToken: 'token-AKIAFIRST',
        expiration: new Date(1_000 + SHARED_FILE_TRUST_MS),
      });
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

  it(
    'reads the shared credentials file named by ' +
      'AWS_SHARED_CREDENTIALS_FILE with an expiry, so the SDK reads it again',
    async () => {
      const file = credentialsFile(dir, 'AKIANODE');
      const s3 = new ClientFactory({ region: 'us-west-2' }, { AWS_SHARED_CREDENTIALS_FILE: file }).s3();
      const first = await s3.config.credentials();
      expect(first).toMatchObject({ accessKeyId: 'AKIANODE' });
      expect(first.expiration).toBeInstanceOf(Date);
    },
  );

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
    const clients = new ClientFactory(
      {
        region: 'us-west-2',
        endpoint: 'http://127.0.0.1:4566',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      },
      {},
    );
    expect(clients.s3().config.forcePathStyle).toBe(true);
    const endpoint = await clients.sqs().config.endpoint?.();
    expect(endpoint).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    clients.destroy();
  });

  it('loads the package of a rarely used client only when the client is first used', () => {
    // A fresh process: which SDK packages a factory has loaded after handing out the SSM client, then after using it.
    const root = resolve(__dirname, '../../..');
    const script =
      `
      const { ClientFactory } = require('./lib/aws/clients');
      const loaded = () => ['client-ssm', 'client-lightsail', 'client-route-53', 'client-sns', 'client-lambda']` +
      `.filter((p) => Object.keys(require.cache).some((k) => k.includes('@aws-sdk/' + p + '/')));
      const clients = new ClientFactory({ region: 'us-west-2' }, {});
      const ssm = clients.ssm(); clients.lightsail(); clients.route53(); clients.sns(); clients.lambda();
      const before = loaded();
      void ssm.config;
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ before: [], after: ['client-ssm'] });
  });

  it('a stand-in sends through the real client, built once', async () => {
    const mock = mockClient(SSMClient);
    mock.on(GetParameterCommand).resolves({ Parameter: { Name: 'p', Value: 'v' } });
    const clients = new ClientFactory(
      { region: 'us-west-2', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
      {},
    );
    const ssm = clients.ssm();
    expect(clients.ssm()).toBe(ssm);
    await expect(ssm.send(new GetParameterCommand({ Name: 'p' }))).resolves.toMatchObject({
      Parameter: { Value: 'v' },
    });
    expect(await ssm.config.region()).toBe('us-west-2');
    expect(mock.calls()).toHaveLength(1);
    clients.destroy();
    mock.restore();
  });
});
