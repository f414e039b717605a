import type { Parameter, SSMClient } from '@aws-sdk/client-ssm';
import { NotFoundError, ValidationError } from '../core/errors';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** Options of a SecureParameter; both have defaults for production. */
export interface SecureParameterOptions {
  /** How long a value is reused before SSM is asked again: a rotated secret is seen within this. */
  ttlMs?: number;
  /** Clock of the cache, ms. */
  now?: () => number;
}

/** Five minutes: one SSM call per warm container every few alerts, rotation seen soon enough. */
export const DEFAULT_PARAMETER_TTL_MS = 5 * 60_000;

/**
 * One SSM SecureString, decrypted and cached in memory for a TTL. The value is a secret: it is
 * returned to the caller and never put in an error message or a log line; errors name only the
 * parameter.
 */
export class SecureParameter {
  private cached: { value: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly ssm: SSMClient,
    /** The parameter's name (not secret), e.g. `/queens-fleet/prod/slack-webhook-url`. */
    readonly name: string,
    options: SecureParameterOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_PARAMETER_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** The value, from the cache while it is fresh; concurrent callers share one SSM call. */
  async get(): Promise<string> {
    if (this.cached !== undefined && this.now() < this.cached.expiresAt) return this.cached.value;
    this.pending ??= this.load().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets the cached value, so the next `get` reads SSM (after the secret was refused). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async load(): Promise<string> {
    const what = `SSM GetParameter ${this.name}`;
    let parameter: Parameter | undefined;
    try {
      const out = await this.ssm.send(new (sdk.ssm().GetParameterCommand)({ Name: this.name, WithDecryption: true }));
      parameter = out.Parameter;
    } catch (error) {
      throw toFleetError(error, what);
    }
    const value = parameter?.Value?.trim() ?? '';
    if (value === '') throw new NotFoundError(`${what}: the parameter has no value`);
    // A plain String is readable by anyone allowed to describe parameters: refuse it.
    if (parameter?.Type !== 'SecureString')
      throw new ValidationError(
        `${what}: the parameter must be a SecureString, not ${parameter?.Type ?? 'untyped'}`,
        'Type',
      );
    this.cached = { value, expiresAt: this.now() + this.ttlMs };
    return value;
  }
}
