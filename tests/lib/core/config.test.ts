import fc from 'fast-check';
import { buildConfig, configSources, scaleConfig, stageHangSeconds, wholeSeconds } from '../../../lib/core/config';
import { ValidationError } from '../../../lib/core/errors';

describe('buildConfig', () => {
  it('gives the seed defaults', () => {
    expect(buildConfig({})).toMatchObject({
      sampleIntervalSeconds: 15,
      syncIntervalSeconds: 30,
      completionWindowSeconds: 300,
      stallSamples: 8,
      leaseRenewSeconds: 10,
      leaseExpirySeconds: 30,
      region: 'us-west-2',
    });
  });

  it('reads numbers and JSON arrays from the environment, over the file', () => {
    const c = buildConfig(
      { FLEET_STALL_SAMPLES: '6', FLEET_NODES: '[{"name":"node-1","instanceId":"mi-0123456789abcdef0"}]' },
      { stallSamples: 10, bucket: 'my-bucket' },
    );
    expect(c.stallSamples).toBe(6);
    expect(c.bucket).toBe('my-bucket');
    expect(c.nodes).toEqual([{ name: 'node-1', instanceId: 'mi-0123456789abcdef0', priority: 100 }]);
  });

  it('stops a hung stage two samples before the stall window, or when told', () => {
    expect(stageHangSeconds(buildConfig({}))).toBe(90);
    expect(stageHangSeconds(buildConfig({}, { stallSamples: 4 }))).toBe(30);
    expect(stageHangSeconds(buildConfig({}, { stageHangSeconds: 20 }))).toBe(20);
  });

  it('treats an empty variable as unset', () => {
    expect(buildConfig({ FLEET_HOSTED_ZONE_ID: '', FLEET_RECORD_NAME: '' }).hostedZoneId).toBeUndefined();
  });

  it('takes the availability zone of a node, and rejects what is not one, naming the field', () => {
    expect(
      buildConfig({}, { nodes: [{ name: 'node-1', instanceId: 'mi-0123456789abcdef0', zone: 'eu-west-2a' }] }).nodes[0]
        ?.zone,
    ).toBe('eu-west-2a');
    expect(() =>
      buildConfig({}, { nodes: [{ name: 'node-1', instanceId: 'mi-0123456789abcdef0', zone: 'London' }] }),
    ).toThrow(/nodes\.0\.zone.*must be an availability zone such as eu-west-2a/);
  });

  it('wants a hosted zone and a record name together, and node addresses with them', () => {
    expect(() => buildConfig({ FLEET_HOSTED_ZONE_ID: 'Z123' })).toThrow(/recordName/);
    expect(() =>
      buildConfig(
        {},
        {
          hostedZoneId: 'Z123',
          recordName: 'o.example.com',
          nodes: [{ name: 'node-1', instanceId: 'mi-0123456789abcdef0' }],
        },
      ),
    ).toThrow(/nodes.0.address/);
  });

  it.each([
    ['an unknown key in the file', {}, { stallSample: 8 }, 'stallSample'],
    ['an unknown FLEET_ variable', { FLEET_STAL_SAMPLES: '8' }, undefined, 'FLEET_STAL_SAMPLES'],
    ['a number that is not one', { FLEET_SAMPLE_INTERVAL_SECONDS: 'soon' }, undefined, 'sampleIntervalSeconds'],
    [
      'a sample interval not below the sync interval',
      { FLEET_SAMPLE_INTERVAL_SECONDS: '30' },
      undefined,
      'syncIntervalSeconds',
    ],
    ['a lease one failed renewal would lapse', {}, { leaseExpirySeconds: 20 }, 'leaseExpirySeconds'],
    ['a hang limit as long as the stall window', {}, { stageHangSeconds: 120 }, 'stageHangSeconds'],
    ['a bad instance id', {}, { nodes: [{ name: 'node-1', instanceId: 'server-1' }] }, 'nodes.0.instanceId'],
    [
      'duplicate node names',
      {},
      {
        nodes: [
          { name: 'node-1', instanceId: 'mi-0123456789abcdef0' },
          { name: 'node-1', instanceId: 'mi-0123456789abcdef1' },
        ],
      },
      'nodes.1.name',
    ],
    [
      'an agent node that is not in the fleet',
      { FLEET_NODE_NAME: 'node-9' },
      { nodes: [{ name: 'node-1', instanceId: 'mi-0123456789abcdef0' }] },
      'nodeName',
    ],
  ])('rejects %s, naming the field', (_name, env, file, field) => {
    let caught: unknown;
    try {
      buildConfig(env, file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).field).toBe(field);
    expect((caught as ValidationError).message).toContain(field.startsWith('FLEET_') ? field : field.split('.').pop()!);
  });
});

describe('scaleConfig', () => {
  it('divides every duration and nothing else', () => {
    const c = scaleConfig(buildConfig({}), 20);
    expect(c.sampleIntervalSeconds).toBe(0.75);
    expect(c.leaseExpirySeconds).toBe(1.5);
    expect(c.stageHangSeconds).toBeUndefined();
    expect(scaleConfig(buildConfig({}, { stageHangSeconds: 60 }), 20).stageHangSeconds).toBe(3);
    expect(c.stallSamples).toBe(8);
  });

  it('says how much faster it runs, and a scaled copy scaled again multiplies', () => {
    expect(buildConfig({}).timeScale).toBe(1);
    expect(scaleConfig(buildConfig({}), 20).timeScale).toBe(20);
    expect(scaleConfig(scaleConfig(buildConfig({}), 2), 10).timeScale).toBe(20);
  });
});

describe('wholeSeconds', () => {
  it('rounds down to whole seconds of the scaled clock, never up, never by a whole step', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 60, noNaN: true }),
        fc.constantFrom(1, 2, 3, 20, 40, 100),
        (seconds, timeScale) => {
          const w = wholeSeconds(seconds, timeScale);
          const steps = w * timeScale;
          expect(Math.abs(steps - Math.round(steps))).toBeLessThan(1e-6);
          expect(w).toBeLessThanOrEqual(seconds + 1e-9);
          expect(seconds - w).toBeLessThan(1 / timeScale);
        },
      ),
    );
    expect(wholeSeconds(14.6, 1)).toBe(14);
    // 17 scenario seconds at ×20, as a division leaves it: still 17 whole steps.
    expect(wholeSeconds(17 / 20, 20) * 20).toBeCloseTo(17, 9);
  });
});

describe('the stage-named defaults', () => {
  it('names the bucket and table after the stage, as the stack does, unless they are set', () => {
    expect(buildConfig({})).toMatchObject({
      stage: 'dev',
      bucket: 'queens-fleet-state-dev',
      table: 'queens-fleet-control-dev',
    });
    expect(buildConfig({ FLEET_STAGE: 'prod' })).toMatchObject({
      bucket: 'queens-fleet-state-prod',
      table: 'queens-fleet-control-prod',
    });
    expect(buildConfig({ FLEET_STAGE: 'prod' }, { bucket: 'acme-fleet-prod' })).toMatchObject({
      bucket: 'acme-fleet-prod',
      table: 'queens-fleet-control-prod',
    });
  });

  it('refuses a stage the stack could not name a bucket after', () => {
    expect(() => buildConfig({ FLEET_STAGE: 'Prod' })).toThrow(/stage/);
  });
});

describe('configSources', () => {
  it('says which layer gave each value: environment over file over stage over default', () => {
    const sources = configSources(
      { FLEET_STALL_SAMPLES: '6', FLEET_STAGE: 'prod' },
      { path: '/etc/fleet.json', value: { stallSamples: 10, region: 'eu-west-2', bucket: 'acme' } },
    );
    expect(sources.stallSamples).toEqual({ kind: 'env', name: 'FLEET_STALL_SAMPLES' });
    expect(sources.region).toEqual({ kind: 'file', path: '/etc/fleet.json' });
    expect(sources.bucket).toEqual({ kind: 'file', path: '/etc/fleet.json' });
    expect(sources.table).toEqual({ kind: 'stage' });
    expect(sources.sampleIntervalSeconds).toEqual({ kind: 'default' });
    expect(configSources({}).table).toEqual({ kind: 'default' });
  });
});
