import { Command, CommanderError } from 'commander';
import fc from 'fast-check';
import { when } from '../../bin/commands/common';
import { modeOf } from '../../bin/commands/admission';
import { registerOperatorCommands } from '../../bin/commands';
import { renderEvents } from '../../bin/commands/render';
import { fleetEventSchema, type FleetEvent } from '../../lib/core/events';
import { parseKind, parseLimit, parseNode, parseSince } from '../../lib/core/views/event-query';
import {
  expectNoPollution,
  hostileNumberArb,
  hostileStringArb,
  mutationArb,
  outcomeOf,
  PROTOTYPE_KEYS,
  RUNS,
} from '../helpers/hostile';
import pc from 'picocolors';
import { stalledEvent } from '../helpers/fixtures';

/**
 * Hostile input: the operator CLI's arguments, through the pure parsers and through commander
 * as `fleet` registers them: a bad argument is commander's invalid-argument error naming the
 * option (exit 2), never a crash; and what a hostile stored event holds prints.
 */
class ReachedAction extends Error {}

/** The CLI as `bin/fleet.ts` builds it, stopping before any action: parsing is what is tested. */
const cli = (): Command => {
  const program = new Command()
    .name('fleet')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  registerOperatorCommands(program);
  program.hook('preAction', () => {
    throw new ReachedAction();
  });
  return program;
};

/** Parses one command line: `action` when it got through, else commander's error code and message. */
const parse = async (args: string[]): Promise<{ code: string; message: string }> => {
  try {
    await cli().parseAsync(args, { from: 'user' });
    return { code: 'no action', message: '' };
  } catch (error) {
    if (error instanceof ReachedAction) return { code: 'action', message: '' };
    if (error instanceof CommanderError) return { code: error.code, message: error.message };
    throw error;
  }
};

const argArb = fc.oneof(
  hostileStringArb.filter((s) => s.length < 5_000),
  fc.constantFrom<string>(
    ...PROTOTYPE_KEYS,
    '-',
    '--',
    '--local',
    '0',
    '1e3',
    '15m',
    'Infinity',
    '9'.repeat(400) + 'd',
  ),
);

describe('CLI argument parsers', () => {
  afterEach(expectNoPollution);

  it.each([
    ['--since', parseSince],
    ['--kind', parseKind],
    ['--limit', parseLimit],
    ['--node', (raw: string) => parseNode(raw)],
  ] as const)('parses any %s, or refuses it naming the option', (option, parser) => {
    fc.assert(
      fc.property(argArb, (raw) => {
        const out = outcomeOf(() => parser(raw));
        if (!out.ok) expect(out.error.field).toBe(option);
      }),
      { numRuns: RUNS },
    );
  });

  it('takes only a finite --since: a duration of milliseconds, or a date', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          argArb,
          fc.tuple(fc.stringMatching(/^\d{1,400}$/), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, u]) => `${n}${u}`),
        ),
        (raw) => {
          const out = outcomeOf(() => parseSince(raw));
          if (out.ok) expect(Number.isFinite(out.value.kind === 'duration' ? out.value.ms : out.value.at)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses two admission modes at once, naming the second', () => {
    expect(outcomeOf(() => modeOf({ hold: true, open: true }))).toMatchObject({
      ok: false,
      error: { field: '--open' },
    });
    expect(modeOf({ auto: true })).toBe('auto');
  });
});

describe('fleet commands through commander', () => {
  const commandLines = fc.oneof(
    fc.tuple(fc.constantFrom('--node', '--kind', '--since', '--limit'), argArb).map(([o, v]) => ['events', o, v]),
    fc.tuple(argArb, argArb).map(([to, reason]) => ['failover', '--to', to, '--reason', reason]),
    fc.tuple(argArb, argArb).map(([node, wait]) => ['rejoin', node, '--wait', wait]),
    fc.array(argArb, { maxLength: 3 }).map((rest) => ['replay', ...rest]),
    fc.array(argArb, { maxLength: 3 }).map((rest) => ['status', ...rest]),
  );

  it('turns any argument into an action or an invalid-argument error naming the option, never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(commandLines, async (args) => {
        const out = await parse(args);
        expectNoPollution();
        expect(out.code).toMatch(/^(action|commander\.[a-zA-Z]+)$/);
        if (out.code === 'commander.invalidArgument')
          expect(out.message).toMatch(/option '--[a-z-]+ <[a-z]+>'|argument 'node'/);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('printing what a hostile stored event holds', () => {
  const EVENT: FleetEvent = stalledEvent;

  it('says when for any time an event or a state records', () => {
    fc.assert(
      fc.property(hostileNumberArb.filter(Number.isFinite), (at) => {
        expect(typeof when(at, 1_700_000_000_000)).toBe('string');
      }),
      { numRuns: RUNS },
    );
  });

  it('renders any events the store accepts', () => {
    fc.assert(
      fc.property(fc.array(mutationArb(EVENT), { maxLength: 3 }), (mutations) => {
        const events = mutations.flatMap((m) => {
          const parsed = fleetEventSchema.safeParse(JSON.parse(JSON.stringify(m.value) ?? 'null'));
          return parsed.success ? [parsed.data] : [];
        });
        expect(typeof renderEvents(events, [], 1_700_000_000_000, pc.createColors(false))).toBe('string');
      }),
      { numRuns: 100 },
    );
  });
});
