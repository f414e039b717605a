import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../core/config';
import { KEYS, nodeOfBeatKey } from '../core/keys';
import { StateStore } from './state-store';
import { TableStore } from './table-store';

/**
 * The records kept in the control table rather than the bucket, both written many times a minute
 * and each under 1 KB in a healthy fleet, so a DynamoDB write unit ($0.625 a million) instead of
 * an S3 PUT ($5 a million):
 * - the lease, renewed every `leaseRenewSeconds` (259,200 writes a month at 10 s: $1.30 as
 *   conditional S3 PUTs, $0.16 as DynamoDB writes);
 * - the watchdog's state, written by about every run that sees a new sample (its clock of when
 *   it last heard each node; docs/deploy.md, "Cost");
 * - each standby's beat, written every sample (172,800 writes a month: $0.86 as S3 PUTs, $0.11
 *   as write units).
 */
export const inTable = (key: string): boolean =>
  key === KEYS.leader || key === KEYS.watchdogState || nodeOfBeatKey(key) !== null;

/**
 * The state store of a configuration: its bucket and prefix, the lease in its table, and retries paced by
 * `retryCapSeconds` (the S3 client itself makes one attempt per call, so every attempt, and
 * every pause between them, is this store's and follows the configuration's time).
 */
export const stateStoreFor = (
  config: Pick<Config, 'bucket' | 'table' | 'prefix' | 'maxObjectBytes' | 'retryCapSeconds'>,
  clients: { s3(): S3Client; dynamodb(): DynamoDBClient },
): StateStore => {
  const capMs = config.retryCapSeconds * 1000;
  const requestRetry = { attempts: 6, baseMs: capMs / 40, capMs };
  const table = new TableStore(clients.dynamodb(), {
    table: config.table,
    maxObjectBytes: config.maxObjectBytes,
    requestRetry,
  });
  return new StateStore(clients.s3(), {
    bucket: config.bucket,
    prefix: config.prefix,
    maxObjectBytes: config.maxObjectBytes,
    requestRetry,
    records: { owns: inTable, store: table },
  });
};
