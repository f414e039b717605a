/**
 * Typed errors shared by the core and the adapters. Adapters wrap SDK errors where the call
 * returns, so callers branch on these classes and never on raw SDK shapes.
 */

/** Base class: every error the project raises on purpose. */
export class FleetError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A compare-and-swap lost: the object changed (412) or a concurrent write is in progress (409). */
export class ConflictError extends FleetError {}

/**
 * An event id is taken by a different event (another incident, or another step under the
 * same id): writing it would lose this one silently, so it is an error instead.
 */
export class EventConflictError extends FleetError {}

/**
 * A worker that no longer holds a valid lease tried to act on a task: refused before anything
 * was sent, so a zombie (a frozen primary that woke after a failover) writes nothing.
 */
export class FencedError extends FleetError {}

/** The service asked us to slow down (503 SlowDown, 429, ThrottlingException). Retryable. */
export class ThrottledError extends FleetError {}

/** The object, queue or resource does not exist. */
export class NotFoundError extends FleetError {}

/** The service could not be reached (connection refused, reset, timeout). Retryable. */
export class UnreachableError extends FleetError {}

/** The service failed the request (a 5xx other than throttling); it may have been applied. Retryable. */
export class TransientError extends FleetError {}

/**
 * S3's 409 ConditionalRequestConflict: a conditional write raced another write to the key.
 * Nothing is known about the object (it may or may not exist): retry, never read it as "exists".
 */
export class ConcurrentWriteError extends FleetError {}

/** Input that fails its schema: a config, an S3 object, an event, a scenario file. */
export class ValidationError extends FleetError {
  constructor(
    message: string,
    /** Dotted path of the offending field, e.g. `faults.0.kind`. */
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A stored object that cannot be used: malformed JSON, a schema mismatch, or larger than the
 * limit. Carries the ETag so a repair can replace exactly that version by CAS.
 */
export class CorruptObjectError extends ValidationError {
  constructor(
    message: string,
    field: string,
    readonly key: string,
    readonly etag: string,
    options?: { cause?: unknown },
  ) {
    super(message, field, options);
  }
}

/** An object larger than the configured limit: reported and skipped, never parsed. */
export class OversizedError extends CorruptObjectError {
  constructor(
    message: string,
    key: string,
    etag: string,
    readonly bytes: number,
  ) {
    super(message, '(size)', key, etag);
  }
}

/** A compare-and-swap lost to another writer, or raced one (409): re-read and decide again. */
export const lostRace = (error: unknown): boolean =>
  error instanceof ConflictError || error instanceof ConcurrentWriteError;

/** True for errors a bounded retry with back-off may cure. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof ThrottledError ||
  error instanceof UnreachableError ||
  error instanceof TransientError ||
  error instanceof ConcurrentWriteError;

/** A message safe to show a person or put in an alert: never a stack or a raw SDK object. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
