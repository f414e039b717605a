import type { Route53Client } from '@aws-sdk/client-route-53';
import type { Config } from '../core/config';
import { FleetError, isRetryable } from '../core/errors';
import { sleep as realSleep } from '../sleep';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** The one record failover moves: the origin name the CDN and clients resolve. */
export interface OriginRecordOptions {
  /** With or without the `/hostedzone/` prefix; the SDK strips it. */
  hostedZoneId: string;
  recordName: string;
  type: 'A' | 'CNAME';
  ttl: number;
}

/** Route 53's propagation state of a change: INSYNC once every authoritative server has it. */
export type ChangeStatus = 'PENDING' | 'INSYNC';

export interface PointToOptions {
  /** How long to wait for INSYNC before returning `insync: false`. */
  timeoutMs: number;
  /** Delay between GetChange calls. */
  pollMs: number;
  sleep?: (ms: number) => Promise<void>;
  /** Monotonic ms for the deadline; tests pass a fake clock advanced by their `sleep`. */
  now?: () => number;
}

export interface PointToResult {
  /** False when the record already held the value and nothing was submitted. */
  changed: boolean;
  /** The change reached every authoritative server before the timeout (or there was none). */
  insync: boolean;
  changeId: string | null;
}

const COMMENT = 'queen-fleet failover';

/** DNS names compare case-insensitively, and `a.example.com.` is `a.example.com`. */
const dnsName = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/**
 * Route 53: the origin record that failover points at the serving node. Simple routing with
 * one value, written by UPSERT so the same call creates it or moves it.
 */
export class OriginRecord {
  constructor(
    private readonly route53: Route53Client,
    private readonly options: OriginRecordOptions,
  ) {}

  /** Submits one UPSERT of the record to `value`; returns the change id (`/change/C…`). */
  async upsert(value: string): Promise<string> {
    const { hostedZoneId, recordName, type, ttl } = this.options;
    try {
      const out = await this.route53.send(
        new (sdk.route53().ChangeResourceRecordSetsCommand)({
          HostedZoneId: hostedZoneId,
          ChangeBatch: {
            Comment: COMMENT,
            Changes: [
              {
                Action: 'UPSERT',
                ResourceRecordSet: { Name: recordName, Type: type, TTL: ttl, ResourceRecords: [{ Value: value }] },
              },
            ],
          },
        }),
      );
      const id = out.ChangeInfo?.Id;
      if (id === undefined) throw new FleetError('Route 53 ChangeResourceRecordSets returned no ChangeInfo.Id');
      return id;
    } catch (error) {
      throw toFleetError(error, 'Route 53 ChangeResourceRecordSets');
    }
  }

  /** The propagation state of a change submitted by `upsert`. */
  async status(changeId: string): Promise<ChangeStatus> {
    try {
      const out = await this.route53.send(new (sdk.route53().GetChangeCommand)({ Id: changeId }));
      // Anything but INSYNC (including a missing status) means "not yet": keep waiting.
      return out.ChangeInfo?.Status === 'INSYNC' ? 'INSYNC' : 'PENDING';
    } catch (error) {
      throw toFleetError(error, 'Route 53 GetChange');
    }
  }

  /** The record's first value as the Route 53 API sees it now, or null when it does not exist. */
  async current(): Promise<string | null> {
    const { hostedZoneId, recordName, type } = this.options;
    try {
      // The listing starts at the name and type but returns whatever follows when they are
      // missing, so the first set must still be matched exactly.
      const out = await this.route53.send(
        new (sdk.route53().ListResourceRecordSetsCommand)({
          HostedZoneId: hostedZoneId,
          StartRecordName: recordName,
          StartRecordType: type,
          MaxItems: 1,
        }),
      );
      const set = (out.ResourceRecordSets ?? []).find(
        (s) => s.Type === type && dnsName(s.Name ?? '') === dnsName(recordName),
      );
      return set?.ResourceRecords?.[0]?.Value ?? null;
    } catch (error) {
      throw toFleetError(error, 'Route 53 ListResourceRecordSets');
    }
  }

  /**
   * Points the record at `value` and waits for INSYNC. Idempotent: when the record already
   * holds the value nothing is submitted, so a repeated failover costs one read.
   */
  async pointTo(value: string, opts: PointToOptions): Promise<PointToResult> {
    const sleep = opts.sleep ?? realSleep;
    const now = opts.now ?? ((): number => performance.now());
    const existing = await this.current();
    // A CNAME's value is itself a DNS name; an A record's is an address compared as written.
    const same =
      existing !== null && (this.options.type === 'CNAME' ? dnsName(existing) === dnsName(value) : existing === value);
    if (same) return { changed: false, insync: true, changeId: null };
    const changeId = await this.upsert(value);
    const deadline = now() + opts.timeoutMs;
    for (;;) {
      try {
        if ((await this.status(changeId)) === 'INSYNC') return { changed: true, insync: true, changeId };
      } catch (error) {
        // The change is already submitted: a throttled or unreachable poll is not a failure.
        if (!isRetryable(error)) throw error;
      }
      const left = deadline - now();
      if (left <= 0) return { changed: true, insync: false, changeId };
      await sleep(Math.min(opts.pollMs, left));
    }
  }
}

/** The origin record a configuration names, or null when it names none. */
export const originRecordFor = (
  config: Pick<Config, 'hostedZoneId' | 'recordName' | 'recordType' | 'recordTtl'>,
  route53: Route53Client,
): OriginRecord | null =>
  config.hostedZoneId === undefined || config.recordName === undefined
    ? null
    : new OriginRecord(route53, {
        hostedZoneId: config.hostedZoneId,
        recordName: config.recordName,
        type: config.recordType,
        ttl: config.recordTtl,
      });
