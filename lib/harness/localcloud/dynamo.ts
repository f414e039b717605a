import { Agent, request as httpRequest, type Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Behaviour } from './behaviour';
import { Bursts, type Chance } from './chance';
import { HARNESS_PRINCIPAL, jsonBody } from './aws-wire';

/** DynamoDB's JSON protocol: every request is a POST whose X-Amz-Target names the operation. */
const TARGET = 'DynamoDB_20120810.';
const JSON_TYPE = 'application/x-amz-json-1.0';
const WRITES = new Set(['UpdateItem', 'PutItem', 'DeleteItem']);
/** The internal requests' identity: dynalite wants a well-formed SigV4 header, never checks it. */
const INTERNAL_AUTH =
  `AWS4-HMAC-SHA256 Credential=${HARNESS_PRINCIPAL}/20260101/us-west-2/dynamodb/aws4_request, ` +
  'SignedHeaders=host;x-amz-date, Signature=0';

type Item = Record<string, unknown>;
interface Answer {
  status: number;
  body: string;
}

/** dynalite 4 (CommonJS, untyped): an HTTP server speaking DynamoDB, in memory. */
type Dynalite = (options: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- dynalite ships no types and no ES module
const dynalite = (): Dynalite => require('dynalite') as Dynalite;

/** What the front door knows of the caller, for faults aimed at one node. */
export interface DynamoCaller {
  principal: string;
  /** Writes to this key lose their response (a drill's `lost-response` fault). */
  losesResponse: (key: string) => boolean;
}

/** Capacity billed for one request: read or write request units, the item's key, who sent it. */
export type Biller = (principal: string, unit: 'RRU' | 'WRU', key: string, units: number) => void;

/**
 * The units DynamoDB reports for a request (its ConsumedCapacity), or, for a write refused by its
 * condition, the 1 unit AWS bills for it.
 */
const unitsOf = (answer: Answer): number => {
  if (answer.status === 400 && answer.body.includes('ConditionalCheckFailedException')) return 1;
  if (answer.status !== 200) return 0;
  return (
    (JSON.parse(answer.body) as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0
  );
};

/** The key of the item a request names (the control table's hash key is `k`), or null. */
const keyOf = (body: Item): string | null => {
  const key = (body.Key ?? body.Item) as Record<string, { S?: string }> | undefined;
  return key?.k?.S ?? null;
};

const error = (type: string, message: string, status = 400): Answer => ({
  status,
  body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }),
});

/**
 * DynamoDB for the local cloud: dynalite (the real request validation, expressions and
 * conditions, in memory) behind the front door, with what AWS documents and dynalite does not do
 * (docs/aws-behaviour.md): bursts of throttling, writes that are applied and lose their response,
 * and eventually consistent reads that return an item as it was before its latest writes.
 */
export class LocalDynamo {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly bursts: Bursts;
  /** Per item, its value before each recent write and when that write landed (for stale reads). */
  private readonly history = new Map<string, { at: number; before: Item | null }[]>();
  /** Per item, the write in progress: writes of one item run one at a time, so what is read around one is its own. */
  private readonly writing = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly server: Server,
    private readonly port: number,
    private readonly b: Pick<Behaviour, 'dynamoThrottleBursts' | 'dynamoLostResponse' | 'dynamoStaleReads'>,
    private readonly chance: Chance,
    private readonly strike: (what: string) => void,
    private readonly observe: (table: string, key: string, body: string | null, principal: string) => void,
    private readonly bill: Biller,
    private readonly now: () => number,
  ) {
    this.bursts = new Bursts(b.dynamoThrottleBursts, chance, now);
  }

  static async start(
    b: Pick<Behaviour, 'dynamoThrottleBursts' | 'dynamoLostResponse' | 'dynamoStaleReads'>,
    chance: Chance,
    strike: (what: string) => void,
    observe: (table: string, key: string, body: string | null, principal: string) => void,
    bill: Biller,
    now: () => number = Date.now,
  ): Promise<LocalDynamo> {
    const server = dynalite()({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('dynalite did not bind a TCP port');
    return new LocalDynamo(server, address.port, b, chance, strike, observe, bill, now);
  }

  handles(request: FastifyRequest): boolean {
    return String(request.headers['x-amz-target'] ?? '').startsWith(TARGET);
  }

  /** One request to dynalite, unfaulted. */
  private send(operation: string, body: Item, authorization = INTERNAL_AUTH): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: this.port,
          method: 'POST',
          path: '/',
          agent: this.agent,
          headers: {
            'content-type': JSON_TYPE,
            'x-amz-target': TARGET + operation,
            'x-amz-date': '20260101T000000Z',
            authorization,
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 500, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The item as it is now (a consistent read, not counted, not faulted). */
  async current(table: string, key: string): Promise<Item | null> {
    const got = await this.send('GetItem', { TableName: table, Key: { k: { S: key } }, ConsistentRead: true });
    return (JSON.parse(got.body) as { Item?: Item }).Item ?? null;
  }

  /** Creates a table keyed by `k` (a string), on demand. */
  async createTable(table: string): Promise<void> {
    const got = await this.send('CreateTable', {
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
    });
    if (got.status !== 200) throw new Error(`local DynamoDB: CreateTable ${table}: ${got.body}`);
  }

  /** Writes an item as the harness (a damaged record for a drill), bypassing every behaviour but the observer. */
  async putRaw(table: string, item: Item): Promise<void> {
    const got = await this.send('PutItem', { TableName: table, Item: item });
    if (got.status !== 200) throw new Error(`local DynamoDB: PutItem: ${got.body}`);
    const key = keyOf({ Item: item });
    if (key !== null) this.observe(table, key, (item.body as { S?: string } | undefined)?.S ?? null, HARNESS_PRINCIPAL);
  }

  /** Writes `text` as the item's body, as a damaged write would: a new version, no write tokens. */
  async damage(table: string, key: string, text: string): Promise<void> {
    const version = Number(((await this.current(table, key))?.v as { N?: string } | undefined)?.N ?? 0);
    await this.putRaw(table, { k: { S: key }, body: { S: text }, v: { N: String(version + 1) } });
  }

  /** The item as an eventually consistent read sees it now, when that differs from the latest. */
  private staleView(table: string, key: string): { item: Item | null } | null {
    const lag = this.b.dynamoStaleReads;
    if (!lag.on) return null;
    const since = this.now() - lag.lagMs;
    const recent = (this.history.get(`${table}/${key}`) ?? []).filter((w) => w.at > since);
    return recent.length === 0 ? null : { item: recent[0]?.before ?? null };
  }

  private async answer(
    operation: string,
    body: Item,
    caller: DynamoCaller,
    authorization: string,
  ): Promise<Answer | 'reset'> {
    const harness = caller.principal === HARNESS_PRINCIPAL;
    if (!harness && this.bursts.strikes()) {
      this.strike('dynamoThrottled');
      return error(
        'ProvisionedThroughputExceededException',
        'The level of configured provisioned throughput for the table was exceeded. ' +
          'Consider increasing your provisioning level with the UpdateTable API.',
      );
    }
    const table = typeof body.TableName === 'string' ? body.TableName : '';
    const key = keyOf(body);
    if (operation === 'GetItem' && body.ConsistentRead !== true && key !== null) {
      const stale = this.staleView(table, key);
      if (stale !== null) {
        this.strike('dynamoStaleRead');
        this.bill(caller.principal, 'RRU', key, 0.5);
        const capacity =
          body.ReturnConsumedCapacity === 'TOTAL' ? { ConsumedCapacity: { TableName: table, CapacityUnits: 0.5 } } : {};
        return {
          status: 200,
          body: JSON.stringify({ ...(stale.item === null ? {} : { Item: stale.item }), ...capacity }),
        };
      }
    }
    if (!WRITES.has(operation) || key === null) {
      const got = await this.send(operation, body, authorization);
      if (key !== null) this.bill(caller.principal, 'RRU', key, unitsOf(got));
      return got;
    }
    const item = `${table}/${key}`;
    const turn = (this.writing.get(item) ?? Promise.resolve()).then(() =>
      this.write(operation, body, caller, authorization, table, key),
    );
    const done = turn.catch(() => undefined);
    this.writing.set(item, done);
    void done.then(() => {
      if (this.writing.get(item) === done) this.writing.delete(item);
    });
    return turn;
  }

  /** One write, applied, observed, and perhaps answered as lost. */
  private async write(
    operation: string,
    body: Item,
    caller: DynamoCaller,
    authorization: string,
    table: string,
    key: string,
  ): Promise<Answer | 'reset'> {
    const harness = caller.principal === HARNESS_PRINCIPAL;
    const before = this.b.dynamoStaleReads.on ? await this.current(table, key) : null;
    const got = await this.send(operation, body, authorization);
    this.bill(caller.principal, 'WRU', key, unitsOf(got));
    if (got.status !== 200) return got;
    const list = this.history.get(`${table}/${key}`) ?? [];
    list.push({ at: this.now(), before });
    this.history.set(
      `${table}/${key}`,
      list.filter((w) => w.at > this.now() - this.b.dynamoStaleReads.lagMs),
    );
    const after = await this.current(table, key);
    this.observe(table, key, (after?.body as { S?: string } | undefined)?.S ?? null, caller.principal);
    if (harness) return got;
    const l = this.b.dynamoLostResponse;
    if (!caller.losesResponse(key) && !(l.on && this.chance.chance(l.rate))) return got;
    if (this.chance.chance(l.resetShare)) {
      this.strike('dynamoLostResponseReset');
      return 'reset';
    }
    this.strike('dynamoLostResponse500');
    return error('InternalServerError', 'Internal server error', 500);
  }

  /** Serves one request of the front door. */
  handle(request: FastifyRequest, reply: FastifyReply, caller: DynamoCaller): void {
    const operation = String(request.headers['x-amz-target']).slice(TARGET.length);
    Promise.resolve()
      .then(() =>
        this.answer(operation, jsonBody(request), caller, String(request.headers.authorization ?? INTERNAL_AUTH)),
      )
      .then(
        (out) => {
          if (out === 'reset') {
            reply.hijack();
            request.raw.socket.destroy();
            return;
          }
          void reply.status(out.status).header('content-type', JSON_TYPE).send(out.body);
        },
        (err: unknown) => {
          void reply
            .status(500)
            .header('content-type', JSON_TYPE)
            .send(error('InternalServerError', String(err), 500).body);
        },
      );
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
