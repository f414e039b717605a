import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_KINDS } from '../../lib/core/events';

describe('docs/runbook.md', () => {
  const rows = new Set(
    readFileSync(join(__dirname, '../../docs/runbook.md'), 'utf8')
      .split('\n')
      .flatMap((line) => /^\| `([A-Z_]+)` \|/.exec(line)?.[1] ?? []),
  );

  it('has a row for every alert the fleet can send', () => {
    expect(EVENT_KINDS.filter((kind) => !rows.has(kind))).toEqual([]);
  });
});
