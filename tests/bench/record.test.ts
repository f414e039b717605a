import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  commandOf,
  endMarker,
  recorded,
  recordIfAsked,
  sectionOf,
  startMarker,
  withSection,
  type Measurement,
} from '../../bench/record';

const ROOT = join(__dirname, '..', '..');

const measurement = (name: string, output: string): Measurement => ({
  name,
  title: `the ${name} bench`,
  command: `npx tsx bench/${name}.ts`,
  commit: 'abc1234',
  date: '2026-12-06',
  node: 'v22.23.5',
  seconds: 42,
  output,
});

/** The text between a section's markers, or null when the page has none. */
const sectionIn = (page: string, name: string): string | null => {
  const from = page.indexOf(startMarker(name));
  const to = page.indexOf(endMarker(name));
  return from < 0 || to < from ? null : page.slice(from, to);
};

describe('a section of the page', () => {
  it('is replaced in place by its own bench, and every other section is left as it was', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z-]{0,11}$/), { minLength: 1, maxLength: 5 }),
        fc.array(fc.string({ unit: fc.constantFrom('a', '1', ' ', '\n', '|') }), { minLength: 10, maxLength: 10 }),
        fc.nat(),
        (names, outputs, pick) => {
          let page = '# Measurements\n\nIntro.\n';
          names.forEach((name, i) => (page = withSection(page, name, sectionOf(measurement(name, outputs[i] ?? '')))));
          const target = names[pick % names.length] ?? '';
          const before = Object.fromEntries(names.map((n) => [n, sectionIn(page, n)]));
          const next = withSection(page, target, sectionOf(measurement(target, 'new figures')));

          expect(next.startsWith('# Measurements\n\nIntro.\n')).toBe(true);
          expect(sectionIn(next, target)).toContain('new figures');
          for (const other of names.filter((n) => n !== target)) expect(sectionIn(next, other)).toBe(before[other]);
          expect(next.split(startMarker(target)).length).toBe(2);
        },
      ),
    );
  });

  it('names the command, the commit, the date and the Node, then what the bench printed, colours left out', () => {
    const text = sectionOf(measurement('footprint', '\u001b[32mok\u001b[39m 117 KiB\n'));
    expect(text).toContain(
      'Command: `npx tsx bench/footprint.ts` · commit `abc1234` · 2026-12-06 · Node v22.23.5 · 42 s',
    );
    expect(text).toContain('```text\nok 117 KiB\n```');
  });

  it('writes commands with the repository-relative paths a reader can type', () => {
    expect(commandOf('footprint', ['--node', join(ROOT, '.tmp/node-22/package/bin/node')])).toBe(
      'npx tsx bench/footprint.ts --node .tmp/node-22/package/bin/node',
    );
  });
});

describe('recording a bench run', () => {
  const argv = process.argv;
  const log = console.log;
  let page: string;
  beforeEach(() => {
    page = join(mkdtempSync(join(tmpdir(), 'qf-record-')), 'measurements.md');
    console.log = jest.fn();
  });
  afterEach(() => {
    process.argv = argv;
    console.log = log;
  });

  it('with --write: the bench never sees the flag, and its section holds what it printed', async () => {
    writeFileSync(page, `# Measurements\n\n${sectionOf(measurement('other', 'kept'))}\n`);
    process.argv = ['node', 'bench/x.ts', '--seeds', '1,2', '--write'];
    let seen: string[] = [];

    await recorded(
      'x',
      'The x bench',
      () => {
        seen = process.argv.slice(2);
        console.log('figure %d', 42);
        return Promise.resolve();
      },
      page,
    );

    expect(seen).toEqual(['--seeds', '1,2']);
    const text = readFileSync(page, 'utf8');
    expect(sectionIn(text, 'other')).toContain('kept');
    expect(sectionIn(text, 'x')).toContain('## The x bench\n\nCommand: `npx tsx bench/x.ts --seeds 1,2` · commit `');
    expect(sectionIn(text, 'x')).toMatch(/ · commit `[0-9a-f]{7,}(\+dirty)?` · \d{4}-\d{2}-\d{2} · Node v\d+/);
    expect(sectionIn(text, 'x')).toContain('```text\nfigure 42\n```');
    expect(console.log).toHaveBeenCalledWith('figure %d', 42);
  });

  it('without --write, or when the bench fails, the page is not written', async () => {
    process.argv = ['node', 'bench/x.ts'];
    recordIfAsked('x', 'The x bench', page).done();
    process.argv = ['node', 'bench/x.ts', '--write'];
    await expect(recorded('x', 'The x bench', () => Promise.reject(new Error('drill failed')), page)).rejects.toThrow();

    expect(existsSync(page)).toBe(false);
  });
});
