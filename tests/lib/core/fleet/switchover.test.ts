import fc from 'fast-check';
import {
  applyWrite,
  initialLease,
  observeLeader,
  planSync,
  release,
  roleOf,
  type LeaseState,
} from '../../../../lib/core/fleet/lease';
import {
  handoverRecord,
  observeRequest,
  planHandover,
  startDrain,
  targetOf,
  withoutRequest,
  type Handing,
  type HandingTiming,
  type HandoverStep,
} from '../../../../lib/core/fleet/switchover';
import type { Leader } from '../../../../lib/core/schemas';

const T: HandingTiming = { renewMs: 10_000, expiryMs: 30_000, drainMs: 15_000 };
const REQ = { id: 'sw-4-1-ab', to: 'node-2', epoch: 4, by: 'ops@host', reason: 'kernel update' };
const AT4: Leader = {
  version: 1,
  primary: 'node-1',
  epoch: 4,
  renewals: 30,
  reason: 't',
  changedBy: 't',
  previous: null,
  handover: 'immediate',
};
const REQUESTED: Leader = { ...AT4, switchover: REQ };

/** The primary's view after it saw the request at 0, draining from `drainFrom`. */
const seen = (drainFrom: number | null = null): Handing => ({ id: REQ.id, to: 'node-2', seenAt: 0, drainFrom });

describe('switchover: request, drain, hand over', () => {
  it('drains once it sees the request, and hands over at once when drained', () => {
    let h = observeRequest('node-1', REQUESTED, null, 0);
    expect(h).toEqual(seen());
    expect(planHandover('node-1', REQUESTED, null, 0, T, false, null)).toEqual({ kind: 'wait' });
    expect(planHandover('node-1', REQUESTED, h, 0, T, false, null)).toEqual({ kind: 'drain' });
    h = startDrain(h!, 600);
    expect(planHandover('node-1', REQUESTED, h, 5_000, T, false, null)).toEqual({ kind: 'drain' });
    expect(planHandover('node-1', REQUESTED, h, 5_100, T, true, null)).toEqual({
      kind: 'hand-over',
      to: 'node-2',
      handover: 'immediate',
      why: 'drained',
    });
  });

  it('hands over awaiting the fence when the drain times out, with the reason in the record', () => {
    const step = planHandover('node-1', REQUESTED, seen(1_000), 16_000, T, false, null);
    expect(step).toMatchObject({ kind: 'hand-over', handover: 'await-fence', why: expect.stringMatching(/timed out/) });
    const next = handoverRecord(REQUESTED, 'node-1', step as Extract<HandoverStep, { kind: 'hand-over' }>);
    expect(next).toMatchObject({ primary: 'node-2', epoch: 5, previous: 'node-1', handover: 'await-fence' });
    expect(next.replaces).toEqual({ epoch: 4, renewals: 30 });
    expect(next.switchover).toBeUndefined();
    expect(next.reason).toMatch(/^switchover sw-4-1-ab: node-1 → node-2 \(drain timed out after 15 s/);
  });

  it('drops a stale request (another epoch) and one that names the primary itself', () => {
    const stale = { ...AT4, epoch: 5, switchover: REQ };
    expect(planHandover('node-1', stale, null, 0, T, false, null)).toMatchObject({ kind: 'drop', why: /stale/ });
    const self = { ...AT4, switchover: { ...REQ, to: 'node-1' } };
    expect(planHandover('node-1', self, null, 0, T, false, null)).toMatchObject({ kind: 'drop', why: /itself/ });
  });

  it('drops a request whose target is held (cordoned, or the fleet paused) before draining, never after', () => {
    const held = 'node-2 is cordoned';
    expect(planHandover('node-1', REQUESTED, seen(), 0, T, false, held)).toEqual({ kind: 'drop', why: held });
    expect(planHandover('node-1', REQUESTED, seen(0), 1_000, T, false, held)).toEqual({ kind: 'drain' });
    expect(planHandover('node-1', REQUESTED, seen(0), 1_000, T, true, held)).toMatchObject({ kind: 'hand-over' });
  });

  it('forgets a request cancelled (removed from the record), and starts afresh for a new one', () => {
    const h = seen(1_000);
    expect(observeRequest('node-1', AT4, h, 2_000)).toBeNull();
    expect(planHandover('node-1', AT4, h, 2_000, T, true, null)).toEqual({ kind: 'none' });
    const again = observeRequest('node-1', { ...AT4, switchover: { ...REQ, id: 'sw-4-2-cd' } }, h, 3_000);
    expect(again).toEqual({ id: 'sw-4-2-cd', to: 'node-2', seenAt: 3_000, drainFrom: null });
  });

  it('lets only the primary act on a request, and names its target', () => {
    expect(planHandover('node-2', REQUESTED, null, 0, T, true, null)).toEqual({ kind: 'none' });
    expect(targetOf('node-2', REQUESTED)).toEqual(REQ);
    expect(targetOf('node-3', REQUESTED)).toBeNull();
    expect(targetOf('node-2', { ...REQUESTED, epoch: 5 })).toBeNull();
    expect(targetOf('node-2', withoutRequest(REQUESTED))).toBeNull();
  });
});

/** What the primary sees at each of its looks: whether its worker drained, and whether the target is held. */
const look = fc.record({
  dt: fc.integer({ min: 1, max: 4_000 }),
  drained: fc.boolean(),
  held: fc.option(fc.constant('the fleet is paused')),
});

describe('switchover: properties over any sequence of looks', () => {
  it('drains only a target not held, hands over at once only when drained, within the drain bound', () => {
    fc.assert(
      fc.property(fc.array(look, { minLength: 1, maxLength: 40 }), (looks) => {
        let h: Handing | null = null;
        let now = 0;
        for (const l of looks) {
          now += l.dt;
          h = observeRequest('node-1', REQUESTED, h, now);
          if (h === null) throw new Error('the request is on the record');
          const step = planHandover('node-1', REQUESTED, h, now, T, l.drained, l.held);
          if (step.kind === 'hand-over') {
            expect(h.drainFrom).not.toBeNull();
            if (step.handover === 'immediate') expect(l.drained).toBe(true);
            else expect(now - (h.drainFrom ?? now)).toBeGreaterThanOrEqual(T.drainMs);
            return;
          }
          if (step.kind === 'drop') {
            // Only before the drain: once draining, it hands over or learns that it did.
            expect(h.drainFrom).toBeNull();
            expect(l.held).not.toBeNull();
            return;
          }
          expect(step.kind).not.toBe('wait');
          if (step.kind === 'drain' && h.drainFrom !== null) expect(now - h.drainFrom).toBeLessThan(T.drainMs);
          if (step.kind === 'drain') h = startDrain(h, now);
        }
      }),
    );
  });

  it('keeps one primary: the old one is fenced by its own handover, the target is primary once it renews', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'immediate' | 'await-fence'>('immediate', 'await-fence'),
        fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 29_980, max: 29_995 })),
        (handover, dt) => {
          const oldState: LeaseState = {
            ...observeLeader('node-1', initialLease(0), REQUESTED, 'e1', 0),
            renewOkAt: 0,
            released: true,
          };
          const step = { kind: 'hand-over' as const, to: 'node-2', handover, why: 'drained' };
          const next = handoverRecord(REQUESTED, 'node-1', step);
          const after = applyWrite('node-1', oldState, { kind: 'handover', next, etag: 'e1' }, true, 'e2', 10, 10);
          expect(roleOf('node-1', after, 10 + dt, T).role).toBe('fenced');
          // The target saw the request's version at 0, then the handover.
          let target = observeLeader('node-2', initialLease(0), REQUESTED, 'e1', 0);
          target = release(observeLeader('node-2', target, next, 'e2', 12), 12 + dt, T);
          const intent = planSync('node-2', target, 12 + dt, { timing: T, rank: 0, ready: true });
          expect(intent.kind).toBe('renew');
          const renewed = release(applyWrite('node-2', target, intent, true, 'e3', 12 + dt, 12 + dt), 12 + dt, T);
          const role = roleOf('node-2', renewed, 12 + dt, T).role;
          // Immediate: at once; after a timed-out drain, only once a full expiry from the replaced version passed.
          if (handover === 'immediate' || 12 + dt >= T.expiryMs) expect(role).toBe('primary');
          else expect(role).toBe('pending');
        },
      ),
    );
  });

  it('sees a request written over the same version without counting it as a renewal', () => {
    const s = observeLeader('node-2', initialLease(0), AT4, 'e1', 0);
    const seen = observeLeader('node-2', { ...s, quietSince: 0 }, REQUESTED, 'e2', 9_000);
    expect(seen.leader?.switchover).toEqual(REQ);
    expect(seen.quietSince).toBe(0);
    expect(seen.seenAt).toBe(0);
  });
});
