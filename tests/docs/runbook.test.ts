import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerOperatorCommands } from '../../bin/commands';
import { EVENT_KINDS } from '../../lib/core/events';
import { ALARM_ANCHORS, ALERT_ANCHORS } from '../../lib/core/runbook';
import { anchorsOf, sectionOf, slug } from '../helpers/markdown';

const PAGE = join(__dirname, '../../docs/runbook.md');
const text = readFileSync(PAGE, 'utf8');

class ReachedAction extends Error {}

/** Parses one command line with the CLI's operator commands as `fleet` registers them, stopping before any action. */
const parse = async (args: string[]): Promise<string> => {
  const program = new Command()
    .name('fleet')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  registerOperatorCommands(program);
  program.hook('preAction', () => {
    throw new ReachedAction();
  });
  try {
    await program.parseAsync(args, { from: 'user' });
    return 'no action';
  } catch (error) {
    if (error instanceof ReachedAction) return 'action';
    if (error instanceof CommanderError) return error.message;
    throw error;
  }
};

/** The words of a command line, double quotes grouping; the runbook's placeholders made concrete. */
const words = (line: string): string[] =>
  [...line.matchAll(/"([^"]*)"|(\S+)/g)].map(([, quoted, bare]) =>
    (quoted ?? bare ?? '').replace(/^(NODE|<node>)$/, 'node-1').replace(/^<eventId>$/, 'node-1-e1-i1.STALLED'),
  );

/** Every `fleet …` (or `npx fleet …`) code span of the page. */
const fleetCommands = (page: string): string[] =>
  [...page.matchAll(/`(?:npx )?fleet ([^`\n]+)`/g)].map((m) => m[1] ?? '');

/** What the CLI makes of a cited line: a bare command name names a command; a longer line must parse whole. */
const outcomeOf = async (line: string): Promise<string> => {
  if (!/\s/.test(line.trim())) {
    const program = new Command();
    registerOperatorCommands(program);
    return program.commands.some((c) => c.name() === line.trim()) ? 'action' : `no command ${line}`;
  }
  return parse(words(line));
};

describe('docs/runbook.md', () => {
  it('has a row for every alert the fleet can send, with its anchor on it', () => {
    const rows = text.split('\n').filter((line) => line.startsWith('| <a id="'));
    const missing = EVENT_KINDS.filter(
      (kind) => !rows.some((row) => row.startsWith(`| <a id="${ALERT_ANCHORS[kind]}"></a>\`${kind}\` |`)),
    );
    expect(missing).toEqual([]);
  });

  it('has the anchor every alert and alarm links', () => {
    const anchors = anchorsOf(PAGE);
    const linked = [...Object.values(ALERT_ANCHORS), ...ALARM_ANCHORS];
    expect(linked.filter((anchor) => !anchors.has(anchor))).toEqual([]);
  });

  it('starts from the symptom too: each entry says how to confirm it, what to do and when to escalate', () => {
    const part = sectionOf(text, 'By symptom');
    const entries = part.split('\n### ').slice(1);
    expect(entries.map((e) => slug(e.split('\n')[0] ?? ''))).toEqual(
      expect.arrayContaining([
        'the-queue-grows-and-no-alert-came',
        'the-watchdog-itself-is-down',
        'both-nodes-are-silent',
        'a-task-is-stuck-or-retried-again-and-again',
        'alerts-flood-or-flap',
        'i-need-to-patch-or-reboot-a-node',
      ]),
    );
    for (const entry of entries) {
      expect(entry).toContain('**Confirm.**');
      expect(entry).toContain('**Escalate.**');
      expect(fleetCommands(entry).length).toBeGreaterThan(0);
    }
    expect(part).toMatch(/`fleet cordon node-\d/);
    expect(part).toMatch(/`fleet pause --for /);
  });

  it('cites only `fleet` commands and options the CLI has, with arguments it takes', async () => {
    const cited = fleetCommands(text);
    expect(cited.length).toBeGreaterThan(20);
    const refused: [string, string][] = [];
    for (const line of cited) {
      const outcome = await outcomeOf(line);
      if (outcome !== 'action') refused.push([line, outcome]);
    }
    expect(refused).toEqual([]);
  });

  it('would refuse a command or an option the CLI lacks', async () => {
    expect(await outcomeOf('drain')).toMatch(/no command/);
    expect(await outcomeOf('failover --to node-2')).toMatch(/--reason/);
    expect(await parse(words('drain node-2'))).toMatch(/unknown command/);
    expect(await parse(words('cordon node-2 --until 2h'))).toMatch(/unknown option/);
    expect(await parse(words('events --since soon'))).toMatch(/--since/);
  });
});
