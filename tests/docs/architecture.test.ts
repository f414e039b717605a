import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRANSITIONS, type StageName } from '../../lib/core/fleet/incident';

const EVERY_STAGE: readonly StageName[] = ['restart-claimed', 'restart-sent', 'watching', 'silent', 'escalating', 'failing-over', 'failover-failed'];

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(__dirname, '../../docs/architecture.md'), 'utf8');

  it('shows every row of the incident state machine as it is in the code', () => {
    const rows = Object.entries(TRANSITIONS).map(([kind, row]) => {
      const from = EVERY_STAGE.every((s) => row.from.includes(s)) ? 'any' : row.from.join(', ');
      return `| \`${kind}\` | ${from} | ${row.kinds?.join(', ') ?? 'all'} | ${row.says} |`;
    });
    const documented = doc.split('\n').filter((line) => /^\| `[A-Z_]+` \|/.test(line));
    expect(documented).toEqual(rows);
  });
});
