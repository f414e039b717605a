import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { StateStore } from '../../../lib/aws/state-store';
import { CorruptObjectError, OversizedError } from '../../../lib/core/errors';
import { leaderSchema, type Leader } from '../../../lib/core/schemas';
import {
  expectNoPollution,
  hostileJsonTextArb,
  hugeStringArb,
  mutationArb,
  outcomeOfAsync,
  RUNS,
} from '../../helpers/hostile';
import { MemoryS3 } from '../../helpers/memory-s3';

/**
 * Hostile input for the store: whatever body `leader.json` holds (garbage, a damaged record,
 * pollution payloads, a body past the size limit), a read is a value or a CorruptObjectError
 * naming the field and carrying the object's ETag; an update copies the damage aside and replaces
 * it only by CAS on that ETag, so a valid record written meanwhile is never overwritten.
 */
const MAX = 4096;
const KEY = 'leader.json';
const FULL = `peer-sync/${KEY}`;
const VALID: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 3,
  renewals: 5,
  reason: 'renewal',
  changedBy: 'node-1',
  previous: null,
  handover: 'immediate',
};

const makeStore = (): StateStore =>
  new StateStore(new S3Client({ region: 'us-west-2' }), {
    bucket: 'b',
    prefix: 'peer-sync/',
    maxObjectBytes: MAX,
    deps: { sleep: () => Promise.resolve(), random: () => 0.5 },
  });

/** Bodies a damaged or hostile object may hold, the size limit crossed now and then. */
const bodyArb = fc.oneof(
  hostileJsonTextArb,
  mutationArb(VALID).map((m) => JSON.stringify(m.value) ?? ''),
  hugeStringArb,
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('utf8')),
  fc.constant(''),
);

/** The renewal the update makes: on the current record, or a fresh one when there is none. */
const renew = (current: Leader | null): { value: Leader; result: null } => ({
  value: current === null ? { ...VALID, epoch: 1, renewals: 0 } : { ...current, renewals: current.renewals + 1 },
  result: null,
});

describe('StateStore, over hostile bodies (property)', () => {
  let s3: MemoryS3;
  beforeEach(() => {
    s3 = new MemoryS3();
  });
  afterAll(() => s3.restore());
  afterEach(expectNoPollution);

  it('reads any body as a valid record, or as CorruptObjectError with the field and the ETag', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, async (body) => {
        s3.set(FULL, body);
        const etag = s3.objects.get(FULL)?.etag;
        const out = await outcomeOfAsync(() => makeStore().read(KEY, leaderSchema));
        expectNoPollution();
        if (out.ok) {
          expect(leaderSchema.safeParse(out.value?.value).success).toBe(true);
          return;
        }
        expect(out.error).toBeInstanceOf(CorruptObjectError);
        expect(out.error).toMatchObject({ key: FULL, etag });
        if (Buffer.byteLength(body) > MAX) expect(out.error).toBeInstanceOf(OversizedError);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses a body past the limit without parsing it, even when S3 gives no Content-Length', async () => {
    // A valid leader padded with a field the schema drops would otherwise parse, whatever its size.
    const padded = JSON.stringify({ ...VALID, pad: 'x'.repeat(MAX) });
    s3.mock
      .on(GetObjectCommand)
      .resolves({ ETag: '"big"', Body: { transformToString: () => Promise.resolve(padded) } as never });
    await expect(makeStore().read(KEY, leaderSchema)).rejects.toBeInstanceOf(OversizedError);
  });

  it('copies a damaged body aside and replaces it only by CAS on its own ETag', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, async (body) => {
        s3 = new MemoryS3();
        s3.set(FULL, body);
        const damagedEtag = s3.objects.get(FULL)?.etag;
        const store = makeStore();
        const reported: CorruptObjectError[] = [];
        const out = await store.update(KEY, leaderSchema, renew, async (error) => {
          reported.push(error);
          await store.quarantine(KEY, error.message, 7);
        });
        expect(out.written).toBe(true);
        const puts = s3.mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
        if (reported.length === 0) {
          // The body was a valid record: renewed in place.
          expect(s3.json(FULL)).toMatchObject({ renewals: (JSON.parse(body) as Leader).renewals + 1 });
          return;
        }
        expect(reported).toEqual([expect.objectContaining({ etag: damagedEtag, key: FULL })]);
        const copy = puts.find((p) => p.Key !== FULL);
        expect(copy).toMatchObject({ Key: 'peer-sync/quarantine/leader.json.7.txt', IfNoneMatch: '*' });
        expect(puts.filter((p) => p.Key === FULL)).toEqual([expect.objectContaining({ IfMatch: damagedEtag })]);
        expect(s3.json(FULL)).toEqual({ ...VALID, epoch: 1, renewals: 0 });
      }),
      { numRuns: RUNS },
    );
  });

  it('never overwrites a valid record written while the damage was being copied aside', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyArb.filter((b) => !leaderSchema.safeParse(safeJson(b)).success),
        fc.nat(1000),
        async (body, renewals) => {
          s3 = new MemoryS3();
          s3.set(FULL, body);
          const store = makeStore();
          const meanwhile: Leader = { ...VALID, epoch: 9, renewals };
          const out = await store.update(KEY, leaderSchema, renew, async () => {
            // Another watchdog heals the object first: this update's CAS on the damaged ETag must lose.
            await makeStore().replace(KEY, meanwhile, s3.objects.get(FULL)?.etag ?? '');
          });
          expect(out.written).toBe(true);
          expect(s3.json(FULL)).toEqual({ ...meanwhile, renewals: renewals + 1 });
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** The JSON a body holds, or undefined when it holds none. */
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};
