import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { endMarker, PAGE, startMarker } from '../../bench/record';

/** Every script in bench/ that prints figures: each has its section of docs/measurements.md. */
const BENCHES = readdirSync(join(__dirname, '..', '..', 'bench'))
  .filter((f) => f.endsWith('.ts') && f !== 'record.ts')
  .map((f) => f.slice(0, -'.ts'.length));

describe('docs/measurements.md', () => {
  const text = readFileSync(PAGE, 'utf8');

  it.each(BENCHES)('has the section of bench/%s.ts, naming its command, commit and date', (name) => {
    const from = text.indexOf(startMarker(name));
    const to = text.indexOf(endMarker(name));
    expect(from).toBeGreaterThanOrEqual(0);
    expect(to).toBeGreaterThan(from);
    const section = text.slice(from, to);
    expect(section).toMatch(new RegExp(`Command: \`npx tsx bench/${name}\\.ts[^\`]*\``));
    expect(section).toMatch(/ · commit `[0-9a-f]{7,}(\+dirty)?` · \d{4}-\d{2}-\d{2} · /);
  });
});
