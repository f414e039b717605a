import { ClockSkewError, isClockSkewError, toFleetError } from '../../../lib/aws/errors';
import { isRetryable, TransientError } from '../../../lib/core/errors';

/** An SDK error as the clients throw it: a name, a message, the answer's metadata. */
const sdkError = (name: string, message: string, status: number, metadata: Record<string, unknown> = {}): Error =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status, ...metadata } });

describe('toFleetError, for a request refused for its signing time', () => {
  it.each([
    [
      'S3',
      sdkError(
        'RequestTimeTooSkewed',
        "The difference between the request time and the server's time is too large.",
        403,
      ),
    ],
    [
      'SQS or DynamoDB, signed too long ago',
      sdkError(
        'InvalidSignatureException',
        'Signature expired: 20260101T000000Z is now earlier than 20260101T001500Z (20260101T002000Z - 5 min.)',
        400,
      ),
    ],
    [
      'SQS or DynamoDB, signed ahead',
      sdkError(
        'InvalidSignatureException',
        'Signature not yet current: 20260101T004000Z is still later than 20260101T002500Z (20260101T002000Z + 5 min.)',
        400,
      ),
    ],
    [
      'SNS or Route 53',
      sdkError(
        'SignatureDoesNotMatch',
        'Signature expired: 20260101T000000Z is now earlier than 20260101T001500Z (20260101T002000Z - 5 min.)',
        403,
      ),
    ],
    [
      'any, once the SDK corrected its clock from the answer',
      sdkError('InvalidSignatureException', 'denied', 400, { clockSkewCorrected: true }),
    ],
    ['EC2-style', sdkError('RequestExpired', 'Request has expired.', 400)],
  ])('is retryable, never a task failure: %s', (_service, error) => {
    const mapped = toFleetError(error, 'PUT peer-sync/x.json');
    expect(mapped).toBeInstanceOf(ClockSkewError);
    expect(mapped).toBeInstanceOf(TransientError);
    expect(isRetryable(mapped)).toBe(true);
    expect(mapped.message).toMatch(/^PUT peer-sync\/x\.json: signed too far from the service's clock/);
  });

  it.each([
    [
      'a wrong secret',
      sdkError(
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
        403,
      ),
    ],
    [
      'a bad signature',
      sdkError(
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided.',
        400,
      ),
    ],
    ['a missing right', sdkError('AccessDenied', 'Access Denied', 403)],
  ])('leaves other refusals alone: %s', (_what, error) => {
    expect(isClockSkewError(error)).toBe(false);
    expect(isRetryable(toFleetError(error, 'GET x'))).toBe(false);
  });
});
