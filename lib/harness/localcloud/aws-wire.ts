import type { FastifyReply, FastifyRequest } from 'fastify';

/** The harness's own key: its setup and enqueues are never faulted, nor counted as the fleet's. */
export const HARNESS_PRINCIPAL = 'drill';

/** The caller's access key id, from the SigV4 Authorization header: the local cloud's identity. */
export const principalOf = (request: FastifyRequest): string => {
  const auth = request.headers.authorization ?? '';
  return /Credential=([^/,\s]+)\//.exec(auth)?.[1] ?? 'anonymous';
};

/** Writes an S3-style XML error. */
export const s3Error = (reply: FastifyReply, status: number, code: string, message: string): void => {
  void reply
    .status(status)
    .header('content-type', 'application/xml')
    .send(
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
        `<Error><Code>${code}</Code><Message>${message}</Message><RequestId>local</RequestId></Error>`,
    );
};

/** Writes an awsJson error (SSM, Lightsail). */
export const jsonError = (reply: FastifyReply, status: number, type: string, message: string): void => {
  void reply
    .status(status)
    .header('content-type', 'application/x-amz-json-1.1')
    .header('x-amzn-errortype', type)
    .send(JSON.stringify({ __type: type, message }));
};

/** Parses a request body that fauxqs's wildcard parser left as a Buffer. */
export const jsonBody = (request: FastifyRequest): Record<string, unknown> => {
  const body = request.body;
  if (Buffer.isBuffer(body))
    return body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as Record<string, unknown>);
  return (body ?? {}) as Record<string, unknown>;
};

/** Splits `/bucket/key…` into its parts; null for bucket-level paths. */
export const s3Path = (url: string): { bucket: string; key: string } | null => {
  const path = decodeURIComponent(url.split('?')[0] ?? '');
  const match = /^\/([^/]+)\/(.+)$/.exec(path);
  return match === null ? null : { bucket: match[1] ?? '', key: match[2] ?? '' };
};
