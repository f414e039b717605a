import type { S3Client } from '@aws-sdk/client-s3';
import { FencedError } from '../core/errors';

/**
 * Refuses every write attempt of `client` while `mayAct` says no, checked right before each
 * attempt goes out (after the SDK's retry step, so a retry that comes due after the process was
 * frozen past its lease is refused too). Reads are never refused.
 */
export const guardWrites = (client: S3Client, mayAct: () => boolean, who: string): void => {
  client.middlewareStack.add(
    (next) => (args) => {
      const method = (args.request as { method?: string }).method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD' && !mayAct())
        throw new FencedError(`${who}: no valid lease: ${method} refused`);
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'queenFleetFence' },
  );
};
