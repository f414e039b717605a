import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { LightsailClient } from '@aws-sdk/client-lightsail';
import type { Route53Client } from '@aws-sdk/client-route-53';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { StoreName } from '../core/schemas';
import { outcomeOf, type Reach } from './reach';
import { sdk } from './sdk';

/** Options every client shares; the SDK itself reads AWS_ENDPOINT_URL(_<SERVICE>) and credentials. */
export interface ClientOptions {
  region: string;
  /** Retry attempts for throttling and transient errors (SDK standard mode). */
  maxAttempts?: number;
  /** Explicit credentials; by default the SDK's provider chain (env, SSM hybrid role, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** One endpoint for every service (the local cloud); otherwise the SDK's own settings. */
  endpoint?: string;
  /**
   * How long a connection may take to open and a request to be answered before it is abandoned
   * (`clientTimeouts`); a long poll asks for its own wait on top, per call. Unset: the SDK's.
   */
  timeouts?: { connectionMs: number; requestMs: number };
  /** Told the outcome of every request to S3, SQS and DynamoDB (a node's view of which stores it reaches). */
  reach?: Reach;
}

/** Temporary credentials as the SDK takes them. */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}
export type CredentialsProvider = () => Promise<Credentials>;

/** How long credentials read from a shared file are trusted before the file is read again. */
export const SHARED_FILE_TRUST_MS = 10 * 60_000;

/** The SDK reads credentials again once they are within five minutes of their expiry. */
const SDK_REFRESH_MS = 5 * 60_000;
/** After a failed read, the last good keys are offered for about this long before a new try. */
const REREAD_SOON_MS = 15_000;

/**
 * Credentials from a shared credentials file that something else rotates: on a node, the SSM
 * Agent rewrites the hybrid activation role's temporary keys before they expire. The SDK keeps
 * file credentials forever (they carry no expiry), so each read is given one: the SDK reads
 * the file again about five minutes before it, and picks up the rotated keys. A read that
 * catches the file mid-rewrite (empty or missing) keeps the last good keys for a few seconds.
 */
export const rotatingFileCredentials = (file: string, now: () => number = Date.now): CredentialsProvider => {
  const read = sdk.credentials().fromIni({ filepath: file, ignoreCache: true });
  let last: Credentials | undefined;
  return async (): Promise<Credentials> => {
    try {
      const { accessKeyId, secretAccessKey, sessionToken } = await read();
      last = { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) };
      return { ...last, expiration: new Date(now() + SHARED_FILE_TRUST_MS) };
    } catch (error) {
      if (last === undefined) throw error;
      return { ...last, expiration: new Date(now() + SDK_REFRESH_MS + REREAD_SOON_MS) };
    }
  };
};

/**
 * The one place clients are built, each on first use (its package loaded then: lib/aws/sdk.ts). Endpoints come from the
 * SDK's standard settings
 * (`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_S3`, …), so the same code runs on AWS and on the
 * embedded local cloud; S3 switches to path-style addressing when its endpoint is overridden,
 * because a bucket name cannot prefix an IP address.
 */
export class ClientFactory {
  private readonly cache = new Map<string, unknown>();

  constructor(
    private readonly options: ClientOptions,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private memo<T>(key: string, build: () => T): T {
    if (!this.cache.has(key)) this.cache.set(key, build());
    return this.cache.get(key) as T;
  }

  private get base(): {
    region: string;
    maxAttempts: number;
    endpoint?: string;
    credentials?: ClientOptions['credentials'] | CredentialsProvider;
    requestHandler?: { connectionTimeout: number; requestTimeout: number; throwOnRequestTimeout: true };
  } {
    const { region, maxAttempts, credentials, endpoint, timeouts } = this.options;
    // Only where the file is the source (the node units set it): keys in the environment, as
    // an operator's shell may have, keep their usual precedence in the SDK's own chain.
    const sharedFile = this.env.AWS_SHARED_CREDENTIALS_FILE;
    const fromFile = sharedFile !== undefined && sharedFile !== '' && this.env.AWS_ACCESS_KEY_ID === undefined;
    const chosen = credentials ?? (fromFile ? rotatingFileCredentials(sharedFile) : undefined);
    // A request timeout only warns unless told to throw (smithy's NodeHttpHandler).
    const handler =
      timeouts === undefined
        ? {}
        : {
            requestHandler: {
              connectionTimeout: timeouts.connectionMs,
              requestTimeout: timeouts.requestMs,
              throwOnRequestTimeout: true as const,
            },
          };
    return {
      region,
      maxAttempts: maxAttempts ?? 3,
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(chosen === undefined ? {} : { credentials: chosen }),
      ...handler,
    };
  }

  s3(): S3Client {
    const overridden =
      this.options.endpoint !== undefined ||
      this.env.AWS_ENDPOINT_URL_S3 !== undefined ||
      this.env.AWS_ENDPOINT_URL !== undefined;
    // One attempt per call: the state store retries, paced by the configuration (lib/aws/state-store.ts).
    // Checksums only where S3 requires them: the SDK's default computes a CRC32 of every PutObject
    // body in JavaScript, a third of a peer-sync round's CPU (bench/peer-sync-cost.ts: 53 → 35 ms
    // for 10 changes at 100,000 tasks). TLS guards the bytes in transit, and every object read
    // is validated against its schema (damage is quarantined and rebuilt).
    return this.memo('s3', () =>
      this.observed(
        's3',
        new (sdk.s3().S3Client)({
          ...this.base,
          maxAttempts: 1,
          forcePathStyle: overridden,
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
      ),
    );
  }
  /** One attempt per call, like S3's: the table store retries (lib/aws/table-store.ts). */
  dynamodb(): DynamoDBClient {
    return this.memo('dynamodb', () =>
      this.observed('dynamodb', new (sdk.dynamodb().DynamoDBClient)({ ...this.base, maxAttempts: 1 })),
    );
  }
  sqs(): SQSClient {
    return this.memo('sqs', () => this.observed('sqs', new (sdk.sqs().SQSClient)(this.base)));
  }

  /** Tells `reach` how each request of the client went, after the SDK's own retries. */
  private observed<C extends { middlewareStack: { add: (...args: never[]) => void } }>(store: StoreName, client: C): C {
    const reach = this.options.reach;
    if (reach === undefined) return client;
    const watch =
      (next: (args: unknown) => Promise<unknown>) =>
      async (args: unknown): Promise<unknown> => {
        try {
          const out = await next(args);
          reach.record(store, 'answered');
          return out;
        } catch (error) {
          reach.record(store, outcomeOf(error));
          throw error;
        }
      };
    (
      client.middlewareStack as unknown as { add: (m: typeof watch, o: { step: 'initialize'; name: string }) => void }
    ).add(watch, { step: 'initialize', name: 'queenFleetReach' });
    return client;
  }
  sns(): SNSClient {
    return this.onFirstUse('sns', () => new (sdk.sns().SNSClient)(this.base));
  }
  // The clients of the watchdog's rarer actions, handed out as stand-ins that build the client
  // (and load its package) on first use: a healthy run never touches them (bench/footprint.ts).
  ssm(): SSMClient {
    return this.onFirstUse('ssm', () => new (sdk.ssm().SSMClient)(this.base));
  }
  lightsail(): LightsailClient {
    return this.onFirstUse('lightsail', () => new (sdk.lightsail().LightsailClient)(this.base));
  }
  route53(): Route53Client {
    return this.onFirstUse('route53', () => new (sdk.route53().Route53Client)(this.base));
  }
  lambda(): LambdaClient {
    return this.onFirstUse('lambda', () => new (sdk.lambda().LambdaClient)(this.base));
  }

  /** A stand-in for the client `key`: every property read builds it (once) and reads the real one. */
  private onFirstUse<T extends object>(key: string, build: () => T): T {
    const real = (): T => this.memo(key, build);
    return this.memo(
      `${key}:stand-in`,
      () =>
        new Proxy({} as T, {
          get: (_target, prop) => {
            const client = real();
            const value: unknown = Reflect.get(client, prop, client);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(client) : value;
          },
        }),
    );
  }

  /** Closes every client built so far (idempotent). */
  destroy(): void {
    for (const [key, client] of this.cache.entries())
      if (!key.endsWith(':stand-in')) (client as { destroy(): void }).destroy();
    this.cache.clear();
  }
}
