import { randomBytes, randomUUID } from 'node:crypto';
import { isIPv4 } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

const NS = 'https://route53.amazonaws.com/doc/2013-04-01/';
const PREFIX = '/2013-04-01/';
const ACTIONS = new Set(['CREATE', 'UPSERT', 'DELETE']);
const TYPES = new Set([
  'A',
  'AAAA',
  'CAA',
  'CNAME',
  'DS',
  'HTTPS',
  'MX',
  'NAPTR',
  'NS',
  'PTR',
  'SOA',
  'SPF',
  'SRV',
  'SSHFP',
  'SVCB',
  'TLSA',
  'TXT',
]);
/** Route 53 pages record sets by at most 300. */
const MAX_ITEMS = 300;

/** One stored record set. `name` is fully qualified and lower case, as Route 53 returns it. */
export interface Route53Record {
  name: string;
  type: string;
  ttl: number;
  values: string[];
  setIdentifier?: string;
  failover?: string;
}

/** A change as applied, for the drill's timeline. */
export interface Route53Change extends Route53Record {
  action: 'CREATE' | 'UPSERT' | 'DELETE';
  zoneId: string;
  /** `/change/C…` */
  changeId: string;
}

export interface Route53FakeOptions {
  /** A change answers PENDING until this long after submission (and always on its first GetChange). */
  insyncAfterMs?: number;
  /** Wall clock in ms; tests may pass their own. */
  now?: () => number;
  onChange?: (record: Route53Change, at: number) => void;
}

interface ChangeEntry {
  id: string;
  submittedAt: number;
  comment: string | undefined;
  polls: number;
  insync: boolean;
}

/** Thrown inside the fake and answered as Route 53's XML error. */
class Route53Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const unescapeXml = (s: string): string =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
/** Inner texts of every `<name>…</name>`; the exact tag, so `<Change>` never matches `<Changes>`. */
const tags = (xml: string, name: string): string[] =>
  [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => m[1] ?? '');
const tag = (xml: string, name: string): string | undefined => {
  const inner = tags(xml, name)[0];
  return inner === undefined ? undefined : unescapeXml(inner.trim());
};
const element = (name: string, value: string | number | undefined): string =>
  value === undefined ? '' : `<${name}>${escapeXml(String(value))}</${name}>`;

/** DNS names compare case-insensitively, and `a.example.com.` is `a.example.com`. */
const normalise = (name: string): string => name.toLowerCase().replace(/\.$/, '');
/** Route 53 lists record sets in DNS order: by labels from the right, then type, then set id. */
const compareLabels = (a: string, b: string): number => {
  const la = normalise(a).split('.').reverse();
  const lb = normalise(b).split('.').reverse();
  for (let i = 0; i < Math.min(la.length, lb.length); i++) {
    const x = la[i] ?? '';
    const y = lb[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return la.length - lb.length;
};
const compareSets = (
  a: { name: string; type: string; setIdentifier?: string },
  b: { name: string; type: string; setIdentifier?: string },
): number =>
  compareLabels(a.name, b.name) ||
  a.type.localeCompare(b.type) ||
  (a.setIdentifier ?? '').localeCompare(b.setIdentifier ?? '');
const setLabel = (r: Route53Record): string =>
  `[name='${r.name}', type='${r.type}'${r.setIdentifier === undefined ? '' : `, set-identifier='${r.setIdentifier}'`}]`;
const changeId = (): string =>
  `C${Array.from(randomBytes(13), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[b % 32]).join('')}`;

/** Parses one `<Change>`: the record-set fields the project uses; AliasTarget is refused. */
const parseChange = (xml: string, index: number): { action: Route53Change['action']; record: Route53Record } => {
  const where = `changeBatch.changes.${index + 1}.member`;
  const action = tag(xml, 'Action') ?? '';
  if (!ACTIONS.has(action))
    throw new Route53Failure(
      400,
      'InvalidInput',
      `Invalid request: ${where}.action '${action}' is not one of CREATE, UPSERT, DELETE`,
    );
  const set = tags(xml, 'ResourceRecordSet')[0] ?? '';
  if (tags(set, 'AliasTarget').length > 0)
    throw new Route53Failure(400, 'InvalidInput', 'the local Route 53 fake does not support alias records');
  const name = tag(set, 'Name') ?? '';
  const type = tag(set, 'Type') ?? '';
  const ttlText = tag(set, 'TTL');
  const ttl = Number(ttlText);
  const values = tags(set, 'ResourceRecord').map((r) => tag(r, 'Value') ?? '');
  if (normalise(name) === '')
    throw new Route53Failure(400, 'InvalidInput', `Invalid request: ${where}.resourceRecordSet.name is missing`);
  if (!TYPES.has(type))
    throw new Route53Failure(
      400,
      'InvalidInput',
      `Invalid request: ${where}.resourceRecordSet.type '${type}' is not a record type`,
    );
  if (ttlText === undefined || !Number.isInteger(ttl) || ttl < 0 || ttl > 2147483647 || values.length === 0) {
    throw new Route53Failure(
      400,
      'InvalidInput',
      'Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords]]',
    );
  }
  const record: Route53Record = { name: `${normalise(name)}.`, type, ttl, values };
  const setIdentifier = tag(set, 'SetIdentifier');
  const failover = tag(set, 'Failover');
  if (setIdentifier !== undefined) record.setIdentifier = setIdentifier;
  if (failover !== undefined) record.failover = failover;
  const badAddress = type === 'A' ? values.find((v) => !isIPv4(v)) : undefined;
  if (badAddress !== undefined)
    throw new Route53Failure(
      400,
      'InvalidChangeBatch',
      "[Invalid Resource Record: 'FATAL problem: ARRDATAIllegalIPv4Address (Value is not a valid IPv4 address) " +
        `encountered with '${badAddress}'']`,
    );
  if (type === 'CNAME' && values.length > 1)
    throw new Route53Failure(
      400,
      'InvalidChangeBatch',
      "[Invalid Resource Record: 'FATAL problem: RRDATAIllegalMultipleValues (a CNAME has exactly one value) " +
        `encountered with '${values.join(',')}'']`,
    );
  return { action: action as Route53Change['action'], record };
};

/**
 * Wire-level fake of the Route 53 calls the project makes (restXml, API version 2013-04-01):
 * ChangeResourceRecordSets, GetChange and ListResourceRecordSets. Any hosted zone id is
 * accepted, since the local cloud keeps no zone registry. As on AWS, a batch applies
 * atomically and at once (ListResourceRecordSets sees it), while GetChange reports PENDING
 * until the change has "propagated": never on its first poll, so callers exercise their wait.
 */
export class Route53Fake {
  /** Keyed by `${zoneId}|${normalisedName}|${type}|${setIdentifier ?? ''}`. */
  readonly records = new Map<string, Route53Record>();
  /** Called for each change of a batch when it is applied, for the drill's timeline. */
  onChange: ((record: Route53Change, at: number) => void) | undefined;
  private readonly changes = new Map<string, ChangeEntry>();
  private readonly insyncAfterMs: number;
  private readonly now: () => number;

  constructor(options: Route53FakeOptions = {}) {
    this.insyncAfterMs = options.insyncAfterMs ?? 0;
    this.now = options.now ?? Date.now;
    this.onChange = options.onChange;
  }

  /** True for Route 53 API paths (they all start with the API version). */
  handles(request: FastifyRequest): boolean {
    return request.url.startsWith(PREFIX);
  }

  handle(request: FastifyRequest, reply: FastifyReply): void {
    const [rawPath = '', query = ''] = request.url.split('?');
    const path = decodeURIComponent(rawPath);
    // Older SDKs end the rrset path with a slash; the SDK strips `/hostedzone/` and `/change/` from ids.
    const rrset = /^\/2013-04-01\/hostedzone\/([^/]+)\/rrset\/?$/.exec(path);
    const change = /^\/2013-04-01\/change\/(?:change\/)?([^/]+)$/.exec(path);
    try {
      if (rrset !== null && request.method === 'POST')
        return this.send(
          reply,
          'ChangeResourceRecordSetsResponse',
          this.changeRecordSets(rrset[1] ?? '', bodyText(request)),
        );
      if (rrset !== null && request.method === 'GET')
        return this.send(
          reply,
          'ListResourceRecordSetsResponse',
          this.listRecordSets(rrset[1] ?? '', new URLSearchParams(query)),
        );
      if (change !== null && request.method === 'GET')
        return this.send(reply, 'GetChangeResponse', this.getChange(change[1] ?? ''));
      throw new Route53Failure(
        400,
        'InvalidInput',
        `the local Route 53 fake does not implement ${request.method} ${path}`,
      );
    } catch (error) {
      const failure =
        error instanceof Route53Failure ? error : new Route53Failure(500, 'InternalFailure', String(error));
      const type = failure.status >= 500 ? 'Receiver' : 'Sender';
      const requestId = randomUUID();
      const xml =
        `<ErrorResponse xmlns="${NS}"><Error><Type>${type}</Type><Code>${failure.code}</Code>` +
        `<Message>${escapeXml(failure.message)}</Message></Error>` +
        `<RequestId>${requestId}</RequestId></ErrorResponse>`;
      this.reply(reply, failure.status, xml, requestId);
    }
  }

  private changeRecordSets(zoneId: string, body: string): string {
    const batch = tags(body, 'ChangeBatch')[0];
    const blocks = batch === undefined ? [] : tags(batch, 'Change');
    if (batch === undefined || blocks.length === 0)
      throw new Route53Failure(
        400,
        'InvalidInput',
        'Invalid request: changeBatch.changes must have at least one member',
      );
    const parsed = blocks.map(parseChange);
    // Check the whole batch against a staged copy first: Route 53 applies all of it or nothing.
    const staged = new Map(this.records);
    const applied = parsed.map(({ action, record }) => {
      const key = `${zoneId}|${normalise(record.name)}|${record.type}|${record.setIdentifier ?? ''}`;
      const existing = staged.get(key);
      if (action === 'CREATE' && existing !== undefined)
        throw new Route53Failure(
          400,
          'InvalidChangeBatch',
          `[Tried to create resource record set ${setLabel(record)} but it already exists]`,
        );
      if (action === 'DELETE' && existing === undefined)
        throw new Route53Failure(
          400,
          'InvalidChangeBatch',
          `[Tried to delete resource record set ${setLabel(record)} but it was not found]`,
        );
      if (
        action === 'DELETE' &&
        (existing?.ttl !== record.ttl || existing.values.join('\n') !== record.values.join('\n'))
      ) {
        throw new Route53Failure(
          400,
          'InvalidChangeBatch',
          `[Tried to delete resource record set ${setLabel(record)} ` +
            'but the values provided do not match the current values]',
        );
      }
      if (action === 'DELETE') staged.delete(key);
      else staged.set(key, record);
      return { key, action, record };
    });
    const entry: ChangeEntry = {
      id: `/change/${changeId()}`,
      submittedAt: this.now(),
      comment: tag(batch, 'Comment'),
      polls: 0,
      insync: false,
    };
    this.changes.set(entry.id, entry);
    for (const { key, action, record } of applied) {
      if (action === 'DELETE') this.records.delete(key);
      else this.records.set(key, record);
      this.onChange?.({ ...record, action, zoneId, changeId: entry.id }, entry.submittedAt);
    }
    return changeInfo(entry, 'PENDING');
  }

  private getChange(id: string): string {
    const entry = this.changes.get(`/change/${id}`);
    if (entry === undefined)
      throw new Route53Failure(404, 'NoSuchChange', `A change with the specified change ID does not exist: ${id}`);
    entry.insync ||= entry.polls > 0 && this.now() - entry.submittedAt >= this.insyncAfterMs;
    entry.polls++;
    return changeInfo(entry, entry.insync ? 'INSYNC' : 'PENDING');
  }

  private listRecordSets(zoneId: string, query: URLSearchParams): string {
    const name = query.get('name');
    const type = query.get('type');
    const identifier = query.get('identifier');
    const maxText = query.get('maxitems');
    const max = maxText === null ? MAX_ITEMS : Number(maxText);
    if (!Number.isInteger(max) || max < 1)
      throw new Route53Failure(400, 'InvalidInput', `Invalid request: maxitems '${maxText}' is not a positive integer`);
    if (type !== null && name === null)
      throw new Route53Failure(400, 'InvalidInput', 'Invalid request: a record type requires a record name');
    if (identifier !== null && type === null)
      throw new Route53Failure(400, 'InvalidInput', 'Invalid request: a set identifier requires a record type');
    const start = { name: name ?? '', type: type ?? '', setIdentifier: identifier ?? '' };
    const sets = [...this.records.entries()]
      .filter(([key]) => key.startsWith(`${zoneId}|`))
      .map(([, record]) => record)
      .sort(compareSets)
      .filter((r) => name === null || compareSets(r, start) >= 0);
    const page = sets.slice(0, Math.min(max, MAX_ITEMS));
    const next = sets[page.length];
    const body = page
      .map((r) => {
        const values = r.values.map((v) => `<ResourceRecord>${element('Value', v)}</ResourceRecord>`).join('');
        return (
          `<ResourceRecordSet>${element('Name', r.name)}${element('Type', r.type)}` +
          `${element('SetIdentifier', r.setIdentifier)}${element('Failover', r.failover)}${element('TTL', r.ttl)}` +
          `<ResourceRecords>${values}</ResourceRecords></ResourceRecordSet>`
        );
      })
      .join('');
    const more =
      next === undefined
        ? ''
        : `${element('NextRecordName', next.name)}${element('NextRecordType', next.type)}` +
          `${element('NextRecordIdentifier', next.setIdentifier)}`;
    return (
      `<ResourceRecordSets>${body}</ResourceRecordSets><IsTruncated>${next !== undefined}</IsTruncated>` +
      `${more}<MaxItems>${max}</MaxItems>`
    );
  }

  private send(reply: FastifyReply, root: string, inner: string): void {
    this.reply(reply, 200, `<${root} xmlns="${NS}">${inner}</${root}>`);
  }

  private reply(reply: FastifyReply, status: number, xml: string, requestId: string = randomUUID()): void {
    void reply
      .status(status)
      .header('content-type', 'text/xml')
      .header('x-amzn-requestid', requestId)
      .send(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`);
  }
}

const changeInfo = (entry: ChangeEntry, status: 'PENDING' | 'INSYNC'): string =>
  `<ChangeInfo>${element('Id', entry.id)}${element('Status', status)}` +
  `${element('SubmittedAt', new Date(entry.submittedAt).toISOString())}` +
  `${element('Comment', entry.comment)}</ChangeInfo>`;

/** The request body as text: fauxqs's wildcard parser leaves it a Buffer. */
const bodyText = (request: FastifyRequest): string => {
  const body: unknown = request.body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return typeof body === 'string' ? body : '';
};
