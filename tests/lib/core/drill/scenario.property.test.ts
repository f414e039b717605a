import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { buildConfig, ENV_NAMES } from '../../../../lib/core/config';
import { parseScenario, scenarioSchema } from '../../../../lib/core/drill/scenario';
import { planWorkload } from '../../../../lib/core/drill/workload';
import { parseJsonText } from '../../../../lib/core/validate';
import { FAITHFUL, resolveBehaviour } from '../../../../lib/harness/localcloud/behaviour';
import {
  expectNoPollution,
  hostileJsonTextArb,
  mutationArb,
  outcomeOf,
  POLLUTERS,
  PROTOTYPE_KEYS,
  RUNS,
} from '../../../helpers/hostile';

/**
 * Hostile input: scenario files, read as `fleet drill --scenario` reads them (the file, its
 * behaviour overrides and its config overrides are all checked before anything starts): a
 * scenario, or a ValidationError naming a field of the file; unknown keys refused at every level.
 */
const VALID = JSON.parse(
  readFileSync(join(__dirname, '../../../scenarios/damaged-objects-lost-responses.json'), 'utf8'),
) as Record<string, unknown>;
const WITH_OVERRIDES = {
  ...VALID,
  config: { stallSamples: 6, sampleIntervalSeconds: 10 },
  behaviour: { s3ConditionalConflict: false },
};
/**
 * What an error may name: a key of the file, or one of its
 * overrides (checked by their own schemas, which name their keys).
 */
const KNOWN = new Set([
  '(root)',
  '""',
  ...Object.keys(scenarioSchema.shape),
  ...Object.keys(ENV_NAMES),
  ...Object.keys(FAITHFUL),
]);

/** What `fleet drill` checks before it starts anything. */
const readScenario = (text: string): unknown => {
  const scenario = parseScenario(parseJsonText(text, 'scenario file'));
  resolveBehaviour(scenario.behaviour);
  buildConfig({}, scenario.config);
  return planWorkload(scenario, 1, 20);
};

describe('scenario files, over hostile input', () => {
  afterEach(expectNoPollution);

  it('reads any file text, or refuses it naming a field of the file', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileJsonTextArb,
          mutationArb(WITH_OVERRIDES).map((m) => JSON.stringify(m.value) ?? 'null'),
        ),
        (text) => {
          const out = outcomeOf(() => readScenario(text));
          expectNoPollution();
          // An unknown key is named as it is spelled; any other error names a field the file may hold.
          if (!out.ok && !/unknown key/.test(out.error.message))
            expect({ field: out.error.field, known: KNOWN.has(out.error.field.split('.')[0] ?? '') }).toMatchObject({
              known: true,
            });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['the file', (key: string) => ({ ...VALID, [key]: { polluted: true } }), (key: string) => key],
    [
      'a workload',
      (key: string) => ({ ...VALID, workload: { ...(VALID.workload as object), [key]: 1 } }),
      (key: string) => `workload.${key}`,
    ],
    [
      'a fault',
      (key: string) => ({ ...VALID, faults: [{ at: 0, kind: 'kill-node', [key]: 1 }] }),
      (key: string) => `faults.0.${key}`,
    ],
    ['the expectations', (key: string) => ({ ...VALID, expect: { [key]: 1 } }), (key: string) => `expect.${key}`],
    [
      'the config overrides',
      (key: string) => ({ ...VALID, config: { [key]: { polluted: true } } }),
      (key: string) => key,
    ],
  ])('refuses an unknown key in %s, the prototype-reaching ones too', (_where, withKey, field) => {
    for (const key of PROTOTYPE_KEYS) {
      // Built as text, so `__proto__` is an own key, as JSON.parse makes it.
      const text = JSON.stringify(withKey('KEY')).replace('"KEY"', JSON.stringify(key));
      const out = outcomeOf(() => readScenario(text));
      expect(out.ok ? 'accepted' : out.error.field).toBe(field(key));
    }
    expectNoPollution();
  });

  it('reads the pollution payloads as overrides without polluting anything', () => {
    for (const polluter of POLLUTERS) {
      outcomeOf(() => readScenario(JSON.stringify({ ...VALID, config: polluter, behaviour: polluter })));
      expectNoPollution();
    }
  });
});
