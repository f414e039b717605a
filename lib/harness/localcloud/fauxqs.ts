import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The parts of fauxqs 2.4.1 the local cloud uses. Its stores are not exported, hence the pin. */
export interface S3ObjectLike {
  body: Buffer;
  etag: string;
}
export interface S3StoreLike {
  createBucket(name: string): void;
  hasBucket(name: string): boolean;
  getObject(bucket: string, key: string): S3ObjectLike;
}
export interface SqsStoreLike {
  host: string;
  region?: string;
  getQueueByName(name: string): { getAttribute(name: string): string | undefined } | undefined;
}
export interface Fauxqs {
  buildApp(options: {
    logger?: boolean;
    defaultRegion?: string;
    stores: { sqsStore: unknown; snsStore: unknown; s3Store: unknown };
  }): FastifyInstance;
  S3Store: new () => S3StoreLike;
  SqsStore: new () => SqsStoreLike;
  SnsStore: new () => unknown;
}

/** fauxqs's dist folder, found through the module search path (its package exports only ".") */
const distDir = (): string => {
  for (const dir of require.resolve.paths('fauxqs') ?? []) {
    const candidate = join(dir, 'fauxqs', 'dist');
    if (existsSync(join(candidate, 'app.js'))) return candidate;
  }
  throw new Error('fauxqs is not installed: run npm ci');
};

// fauxqs is an ES module; this CommonJS project loads it with a dynamic import, which
// TypeScript (module node20), tsx and the test transform all keep as a real import().
const importEsm = (url: string): Promise<Record<string, unknown>> => import(url) as Promise<Record<string, unknown>>;

/**
 * Runs `load` with Node's warning that SQLite is experimental left out: fauxqs imports node:sqlite
 * for a persistence the local cloud never turns on, and the warning would land in every drill's output.
 */
const withoutSqliteWarning = async <T>(load: () => Promise<T>): Promise<T> => {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const text = warning instanceof Error ? warning.message : warning;
    if (!text.startsWith('SQLite is an experimental')) emit(warning, ...rest);
  };
  try {
    return await load();
  } finally {
    process.emitWarning = emit;
  }
};

/** Loads fauxqs's app builder and store classes. */
export const loadFauxqs = async (): Promise<Fauxqs> => {
  const dist = distDir();
  const load = (file: string): Promise<Record<string, unknown>> => importEsm(pathToFileURL(join(dist, file)).href);
  const [app, s3, sqs, sns] = await withoutSqliteWarning(() =>
    Promise.all([load('app.js'), load('s3/s3Store.js'), load('sqs/sqsStore.js'), load('sns/snsStore.js')]),
  );
  return {
    buildApp: app.buildApp as Fauxqs['buildApp'],
    S3Store: s3.S3Store as Fauxqs['S3Store'],
    SqsStore: sqs.SqsStore as Fauxqs['SqsStore'],
    SnsStore: sns.SnsStore as Fauxqs['SnsStore'],
  };
};
