import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Behaviour } from './behaviour';

/**
 * The signatureTime behaviour (docs/aws-behaviour.md): a request signed too far from the cloud's
 * own clock is refused as each service refuses it, with a `Date` header the SDK corrects from.
 */
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const SCOPE_DAY = /Credential=[^/,\s]+\/(\d{4})(\d{2})(\d{2})\//;
const DAY_MS = 86_400_000;
/** Signing times and the `Date` header have whole seconds: a client that corrected may still be this far off. */
export const RESOLUTION_MS = 2_000;

const utc = (m: RegExpExecArray): number =>
  Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));

/**
 * When a request says it was signed, as [earliest, latest] epoch ms: its `x-amz-date` (whole
 * seconds), else the day of its credential scope; null for a request that is not signed.
 */
export const signedWithin = (headers: FastifyRequest['headers']): [number, number] | null => {
  const amz = headers['x-amz-date'];
  const at = typeof amz === 'string' ? AMZ_DATE.exec(amz) : null;
  if (at !== null) return [utc(at), utc(at) + 999];
  const day = SCOPE_DAY.exec(headers.authorization ?? '');
  return day === null ? null : [utc(day), utc(day) + DAY_MS - 1];
};

/** `20260101T000000Z`, as SigV4 writes times. */
export const amzDate = (ms: number): string => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');

/** Whether a request signed within `signed` is too old or too new at `now` for a window of `limitMs`. */
export const skewOf = (signed: [number, number], now: number, limitMs: number): 'expired' | 'future' | null => {
  if (now - signed[1] > limitMs + RESOLUTION_MS) return 'expired';
  if (signed[0] - now > limitMs + RESOLUTION_MS) return 'future';
  return null;
};

const minutes = (ms: number): string => `${Math.round((ms / 60_000) * 100) / 100} min.`;

/**
 * Refuses a request of kind `kind` (front-door.ts requestKind) signed too far from `now`, as its
 * service does; true when it did. S3: 403 RequestTimeTooSkewed; SNS and Route 53: 403
 * SignatureDoesNotMatch; the JSON services: 400 InvalidSignatureException.
 */
export const refuseSkewed = (
  b: Behaviour['signatureTime'],
  kind: string | null,
  request: FastifyRequest,
  reply: FastifyReply,
  now = Date.now(),
): boolean => {
  if (!b.on || kind === null) return false;
  const signed = signedWithin(request.headers);
  if (signed === null) return false;
  const s3 = kind.startsWith('s3.');
  const limit = s3 ? b.s3SkewMs : b.skewMs;
  const off = skewOf(signed, now, limit);
  if (off === null) return false;
  void reply.header('date', new Date(now).toUTCString());
  const requestTime = amzDate(signed[0]);
  if (s3) {
    const xml = [
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>RequestTimeTooSkewed</Code>',
      "<Message>The difference between the request time and the server's time is too large.</Message>",
      `<RequestTime>${requestTime}</RequestTime>`,
      `<ServerTime>${new Date(now).toISOString().replace(/\.\d{3}/, '')}</ServerTime>`,
      `<MaxAllowedSkewMilliseconds>${Math.round(limit)}</MaxAllowedSkewMilliseconds>`,
      '<RequestId>local</RequestId></Error>',
    ].join('');
    void reply.status(403).header('content-type', 'application/xml').send(xml);
    return true;
  }
  const message =
    off === 'expired'
      ? `Signature expired: ${requestTime} is now earlier than ${amzDate(now - limit)} ` +
        `(${amzDate(now)} - ${minutes(limit)})`
      : `Signature not yet current: ${requestTime} is still later than ${amzDate(now + limit)} ` +
        `(${amzDate(now)} + ${minutes(limit)})`;
  if (kind === 'sns' || kind === 'route53') {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Sender</Type>' +
      `<Code>SignatureDoesNotMatch</Code><Message>${message}</Message></Error>` +
      '<RequestId>local</RequestId></ErrorResponse>';
    void reply.status(403).header('content-type', 'text/xml').send(xml);
    return true;
  }
  const type = String(request.headers['content-type'] ?? '');
  void reply
    .status(400)
    .header('content-type', type.startsWith('application/x-amz-json') ? type : 'application/json')
    .header('x-amzn-errortype', 'InvalidSignatureException')
    .send(JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message }));
  return true;
};
