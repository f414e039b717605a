import fc from 'fast-check';
import { buildConfig, CONFIG_FILE_ENV, ENV_NAMES } from '../../../lib/core/config';
import { parseJsonText } from '../../../lib/core/validate';
import {
  expectNoPollution,
  hostileJsonTextArb,
  hostileKeyArb,
  hostileStringArb,
  hostileValueArb,
  mutationArb,
  outcomeOf,
  POLLUTERS,
  PROTOTYPE_KEYS,
  RUNS,
} from '../../helpers/hostile';

/**
 * Hostile input: the configuration from hostile environments and files. Every outcome is a
 * configuration or a ValidationError naming a config key or the variable; unknown keys stay
 * refused, whatever they are called.
 */
const KEYS = Object.keys(ENV_NAMES);
const VARIABLES = [...Object.values(ENV_NAMES), CONFIG_FILE_ENV];

/**
 * An error names the key it is about (`nodes.0.name` is about `nodes`), the variable, or the unknown key as spelled.
 */
const namesKnownThing = (error: { field: string; message: string }): boolean =>
  /unknown key/.test(error.message) ||
  KEYS.includes(error.field.split('.')[0] ?? '') ||
  error.field.startsWith('FLEET_') ||
  error.field === '(root)';

const FILE = {
  region: 'eu-west-2',
  bucket: 'fleet-state',
  prefix: 'peer-sync/',
  queueUrl: 'https://sqs.eu-west-2.amazonaws.com/123456789012/tasks',
  topicArn: 'arn:aws:sns:eu-west-2:123456789012:fleet-events',
  nodes: [
    {
      name: 'node-1',
      instanceId: 'mi-0123456789abcdef0',
      priority: 1,
      address: '192.0.2.1',
      zone: 'eu-west-2a',
      lightsailName: 'n1',
    },
    { name: 'node-2', instanceId: 'mi-0123456789abcdef1', priority: 2, address: '192.0.2.2', zone: 'eu-west-2b' },
  ],
  hostedZoneId: 'Z0123',
  recordName: 'origin.example',
  stageCommands: { transcode: ['/opt/fleet/transcode'] },
  stageHangSeconds: 60,
  healthHost: '::1',
};

/** An environment of known and unknown FLEET_ variables, with any text in them. */
const envArb = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(...VARIABLES.filter((v) => v !== CONFIG_FILE_ENV)),
        fc.constantFrom('FLEET_', 'FLEET___PROTO__', 'FLEET_CONSTRUCTOR', 'PATH'),
        hostileKeyArb,
      ),
      fc.oneof(
        hostileStringArb,
        hostileValueArb.map((v) => JSON.stringify(v) ?? ''),
      ),
    ),
    { maxLength: 4 },
  )
  .map((entries) => Object.fromEntries(entries) as Record<string, string>);

describe('config, over hostile input', () => {
  afterEach(expectNoPollution);

  it('builds from any environment, or refuses it naming the key or the variable', () => {
    fc.assert(
      fc.property(envArb, (env) => {
        const out = outcomeOf(() => buildConfig(env));
        expectNoPollution();
        if (!out.ok)
          expect({ field: out.error.field, known: namesKnownThing(out.error) }).toMatchObject({ known: true });
      }),
      { numRuns: RUNS },
    );
  });

  it('builds from any file text, or refuses it naming the key', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileJsonTextArb,
          mutationArb(FILE).map((m) => JSON.stringify(m.value) ?? 'null'),
        ),
        (text) => {
          const out = outcomeOf(() => buildConfig({}, parseJsonText(text, 'config file')));
          expectNoPollution();
          if (!out.ok)
            expect({ field: out.error.field, known: namesKnownThing(out.error) }).toMatchObject({ known: true });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses every key it does not know in a file, the prototype-reaching ones too', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom<string>(...PROTOTYPE_KEYS), hostileKeyArb).filter((k) => !KEYS.includes(k)),
        fc.oneof(hostileValueArb, fc.constantFrom(...POLLUTERS)),
        (key, value) => {
          const head = JSON.stringify(FILE).slice(0, -1);
          const text = `${head},${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}}`;
          const out = outcomeOf(() => buildConfig({}, parseJsonText(text, 'config file')));
          expect(out.ok ? 'accepted' : out.error.message).toMatch(/unknown key/);
          expectNoPollution();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses an unknown key inside a node, the prototype-reaching ones too', () => {
    for (const key of PROTOTYPE_KEYS) {
      const node = `{"name":"node-1","instanceId":"mi-0123456789abcdef0",${JSON.stringify(key)}:{"polluted":true}}`;
      const out = outcomeOf(() => buildConfig({ FLEET_NODES: `[${node}]` }));
      expect(out.ok ? 'accepted' : out.error.field).toBe(`nodes.0.${key}`);
    }
    expectNoPollution();
  });

  it('takes a node name only if an empty object has no property of that name', () => {
    const out = outcomeOf(() =>
      buildConfig({ FLEET_NODES: '[{"name":"constructor","instanceId":"mi-0123456789abcdef0"}]' }),
    );
    expect(out.ok ? 'accepted' : out.error.field).toBe('nodes.0.name');
  });
});
