import { randomUUID } from 'node:crypto';

/**
 * The user metadata every write carries: a random token naming that write, followed by the
 * tokens of the versions it was written over (newest first), so a writer can tell later that its
 * write landed even when others have written since.
 */
export const WRITE_TOKENS = 'write-tokens';
const TOKEN_HISTORY = 16;
/** Versions whose token chains are kept, to extend them on the next CAS of the same key. */
const CHAIN_CACHE = 2_000;

/** Where a write stands once its response was lost: ours on top, ours under later writes, or not there. */
export type Landing = { landed: 'latest'; etag: string } | { landed: 'superseded' } | { landed: 'no' };

/**
 * The token chains of the versions one store last read or wrote. A conditional write over a
 * known version extends its chain, so the chain on the object names the recent writes that led
 * to it (lib/aws/state-store.ts resolves lost responses with it).
 */
export class WriteTokens {
  private readonly chains = new Map<string, { etag: string; tokens: string[] }>();

  /** `history`: tokens a chain keeps (16 in S3 metadata, which is free; fewer where bytes are billed). */
  constructor(private readonly history = TOKEN_HISTORY) {}

  /** A fresh token and the chain a write of `key` carries: over `ifMatch`, that version's chain extended. */
  next(key: string, ifMatch: string | undefined): { token: string; chain: string[] } {
    const token = randomUUID();
    const known = this.chains.get(key);
    const over = ifMatch !== undefined && known?.etag === ifMatch ? known.tokens : [];
    return { token, chain: [token, ...over].slice(0, this.history) };
  }

  /** Records the chain of a version read (from its metadata) or written. */
  remember(key: string, etag: string, tokens: string | readonly string[] | undefined): void {
    const list = typeof tokens === 'string' || tokens === undefined ? parse(tokens) : [...tokens];
    this.chains.delete(key);
    this.chains.set(key, { etag, tokens: list });
    if (this.chains.size > CHAIN_CACHE) this.chains.delete(this.chains.keys().next().value ?? '');
  }
}

const parse = (metadata: string | undefined): string[] => (metadata ?? '').split(' ').filter((t) => t !== '');

/** Where `token` stands in the chain of the object as it is now (null when there is none). */
export const landing = (token: string, now: { etag: string; tokens: string | undefined } | null): Landing => {
  const chain = parse(now?.tokens);
  if (now !== null && chain[0] === token) return { landed: 'latest', etag: now.etag };
  return chain.includes(token) ? { landed: 'superseded' } : { landed: 'no' };
};
