/**
 * Keeps docs/measurements.md in step with the benches: a bench run with `--write` copies what it
 * prints into its own section of the page, with the command, the commit, the date and the Node that
 * produced it. Each section lies between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, so a
 * bench rewrites its own and leaves the others as they were.
 *
 *   npx tsx bench/watchdog-cost.ts --write     measures, prints, and rewrites its section
 *   npm run bench:record                       the benches that take minutes, not hours, one after the other
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, stripVTControlCharacters } from 'node:util';

const ROOT = join(__dirname, '..');
export const PAGE = join(ROOT, 'docs', 'measurements.md');

export interface Measurement {
  /** The bench's file name without `.ts`; its section's marker. */
  name: string;
  /** The section's heading. */
  title: string;
  command: string;
  commit: string;
  /** YYYY-MM-DD. */
  date: string;
  node: string;
  /** How long the bench ran, in seconds. */
  seconds: number;
  /** What the bench printed. */
  output: string;
}

export const startMarker = (name: string): string => `<!-- bench:${name} -->`;
export const endMarker = (name: string): string => `<!-- /bench:${name} -->`;

/** The section of one measurement, markers included. */
export const sectionOf = (m: Measurement): string =>
  [
    startMarker(m.name),
    `## ${m.title}`,
    '',
    `Command: \`${m.command}\` · commit \`${m.commit}\` · ${m.date} · Node ${m.node} · ` +
      `${m.seconds < 120 ? `${Math.round(m.seconds)} s` : `${(m.seconds / 60).toFixed(1)} min`}`,
    '',
    '```text',
    stripVTControlCharacters(m.output).trimEnd(),
    '```',
    endMarker(m.name),
  ].join('\n');

/** `page` with the section of `name` replaced by `section`, or `section` added at its end when it has none. */
export const withSection = (page: string, name: string, section: string): string => {
  const from = page.indexOf(startMarker(name));
  const to = page.indexOf(endMarker(name));
  if (from < 0 || to < from) return `${page.trimEnd()}\n\n${section}\n`;
  return page.slice(0, from) + section + page.slice(to + endMarker(name).length);
};

const git = (args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/**
 * The short commit of HEAD, with "+dirty" when the tree differs from it. The page itself does
 * not count: it is the benches' output, and one bench's section must not dirty the next one's.
 */
export const commitOf = (): string => {
  try {
    const head = git(['rev-parse', '--short', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--', '.', ':(exclude)docs/measurements.md']) !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
};

/** The command as a reader would type it: the repository's absolute paths made relative. */
export const commandOf = (name: string, args: readonly string[]): string =>
  ['npx tsx', `bench/${name}.ts`, ...args].join(' ').split(`${ROOT}/`).join('');

/**
 * Starts recording when the bench was run with `--write`: takes the flag out of process.argv (the
 * bench's own parsing never sees it) and keeps a copy of what console.log prints until `done()`,
 * which writes the section. Without `--write`, `done()` does nothing.
 */
export const recordIfAsked = (name: string, title: string, page = PAGE): { done: () => void } => {
  const at = process.argv.indexOf('--write');
  if (at < 0) return { done: () => undefined };
  process.argv.splice(at, 1);
  const command = commandOf(name, process.argv.slice(2));
  // The commit measured is the one at the start, whatever happens to the tree meanwhile.
  const commit = commitOf();
  const started = Date.now();
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]): void => {
    lines.push(format(...args));
    log(...args);
  };
  return {
    done: () => {
      console.log = log;
      const measurement: Measurement = {
        name,
        title,
        command,
        commit,
        date: new Date().toISOString().slice(0, 10),
        node: process.version,
        seconds: (Date.now() - started) / 1000,
        output: lines.join('\n').split(`${ROOT}/`).join(''),
      };
      const before = existsSync(page) ? readFileSync(page, 'utf8') : '# Measurements\n';
      writeFileSync(page, withSection(before, name, sectionOf(measurement)));
      log(`${name}: section written to ${page.split(`${ROOT}/`).join('')}`);
    },
  };
};

/** Runs a bench's `main`, recording what it printed when it was run with `--write` and ended well. */
export const recorded = async (name: string, title: string, main: () => Promise<void>, page = PAGE): Promise<void> => {
  const recording = recordIfAsked(name, title, page);
  await main();
  recording.done();
};
