import { pollStep, type PollStep } from '../../agent/worker/poll-step';
import type { RoleFile } from '../../agent/registry';
import { buildConfig } from '../../lib/core/config';

// Defaults: renew 10 s, expiry 30 s (the primary may consume 20 s past a renewal), polls of up to 20 s.
const config = buildConfig({}, { nodes: [{ name: 'node-1', instanceId: 'mi-00000000000000001' }] });
const primary = (validUntil: number): RoleFile => ({ role: 'primary', epoch: 2, validUntil, boot: 'b' });
const receive = (waitSeconds: number): PollStep => ({ kind: 'receive', waitSeconds });
const awaitRenewal = (ms: number): PollStep => ({ kind: 'await-renewal', ms });

describe('pollStep', () => {
  it.each<[string, RoleFile | null, number, PollStep]>([
    ['idles without a lease', null, 1, { kind: 'idle' }],
    ['idles with no room for another task', primary(20_000), 0, { kind: 'idle' }],
    ['polls until a tenth of a renewal before the lease ends, in whole seconds', primary(20_000), 1, receive(19)],
    ['waits for a renewal due within a quarter period, and a twentieth more', primary(11_000), 1, awaitRenewal(1_500)],
    ['does not wait for a renewal late by more than a quarter period', primary(7_000), 1, receive(6)],
    ['idles when the lease left allows no whole second of poll', primary(1_500), 1, { kind: 'idle' }],
  ])('%s', (_, role, free, step) => {
    expect(pollStep(role, free, 0, config)).toEqual(step);
  });
});
