import {
  ConcurrentWriteError,
  ConflictError,
  FleetError,
  NotFoundError,
  ThrottledError,
  TransientError,
  UnreachableError,
} from '../core/errors';

interface SdkErrorLike {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; clockSkewCorrected?: boolean };
  $retryable?: { throttling?: boolean };
}

/**
 * A request refused for its signing time: signed too far from AWS's clock (S3 RequestTimeTooSkewed,
 * "Signature expired" elsewhere). Nothing was applied. The SDK has set its clock offset from the
 * answer's Date header, so sending it again, signed anew, gets through: retryable, never a task's failure.
 */
export class ClockSkewError extends TransientError {}

/** Refused for the signing time, whatever the message (the SDK's own list: @smithy/service-error-classification). */
const SKEW_NAMES = new Set(['RequestTimeTooSkewed', 'RequestExpired', 'RequestInTheFuture']);
/** Refused for the signature, which the signing time explains only when the message says so. */
const SIGNATURE_NAMES = new Set(['InvalidSignatureException', 'SignatureDoesNotMatch']);
const SIGNING_TIME = /^Signature (expired|not yet current)/;

/** True for a refusal of the request's signing time (a skewed clock), not of its signature or its rights. */
export const isClockSkewError = (error: unknown): boolean => {
  const e = error as SdkErrorLike;
  const name = e.name ?? '';
  if (SKEW_NAMES.has(name)) return true;
  return SIGNATURE_NAMES.has(name) && (SIGNING_TIME.test(e.message ?? '') || e.$metadata?.clockSkewCorrected === true);
};

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);
const THROTTLE_NAMES = new Set([
  'SlowDown',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'ThrottledException',
  'PriorRequestNotComplete',
]);
const NOT_FOUND_NAMES = new Set([
  'NoSuchKey',
  'NotFound',
  'NoSuchBucket',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'InvocationDoesNotExist',
  'NotFoundException',
  'NoSuchHostedZone',
  'InvalidInstanceId',
]);

/**
 * The SDK's wrapper (`asSdkError`) for a thrown value that is not an Error of this realm, such
 * as a socket error raised in another VM context (jest's sandbox): only its message says what it was.
 */
const WRAPPED_CONNECTION =
  /^AWS SDK error wrapper for (TimeoutError|AbortError|Error): (socket hang up|read ECONNRESET|connect ECONNREFUSED)/;

/** True for network-level failures: nothing reached the service. */
export const isConnectionError = (error: unknown): boolean => {
  const e = error as SdkErrorLike & { cause?: SdkErrorLike; message?: string };
  return (
    CONNECTION_CODES.has(e.code ?? '') ||
    CONNECTION_CODES.has(e.cause?.code ?? '') ||
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    WRAPPED_CONNECTION.test(e.message ?? '')
  );
};

/**
 * Turns an SDK error into the project's typed errors, where the call returns. `what` names the
 * call for the message (`PUT peer-sync/leader.json`). Unknown errors keep their cause.
 */
export const toFleetError = (error: unknown, what: string): FleetError => {
  if (error instanceof FleetError) return error;
  const e = error as SdkErrorLike;
  const status = e.$metadata?.httpStatusCode;
  const name = e.name ?? 'Error';
  if (isClockSkewError(error)) {
    return new ClockSkewError(`${what}: signed too far from the service's clock (${name})`, { cause: error });
  }
  if (name === 'ConditionalRequestConflict' || (status === 409 && name !== 'PreconditionFailed')) {
    return new ConcurrentWriteError(`${what}: a concurrent write to the key is in progress (${name})`, {
      cause: error,
    });
  }
  if (status === 412 || name === 'PreconditionFailed' || name === 'ConditionalCheckFailedException')
    return new ConflictError(`${what}: precondition failed (${name})`, { cause: error });
  if (THROTTLE_NAMES.has(name) || status === 429 || status === 503 || e.$retryable?.throttling === true) {
    return new ThrottledError(`${what}: throttled (${name})`, { cause: error });
  }
  if (NOT_FOUND_NAMES.has(name) || status === 404)
    return new NotFoundError(`${what}: not found (${name})`, { cause: error });
  if (isConnectionError(error)) return new UnreachableError(`${what}: unreachable (${name})`, { cause: error });
  if (status !== undefined && status >= 500)
    return new TransientError(`${what}: the service failed the request (${name}, ${status})`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FleetError(`${what}: ${name}: ${message}`, { cause: error });
};
