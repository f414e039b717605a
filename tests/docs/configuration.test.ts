import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigDoc } from '../../lib/deploy/config-doc';
import { configSchema, nodeSpecSchema } from '../../lib/core/config';

describe('docs/configuration.md', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');

  it('is what the schema generates (npm run docs:config)', () => {
    expect(doc).toBe(renderConfigDoc());
  });

  it('lists and describes every key of the fleet and of a node', () => {
    for (const key of [...Object.keys(configSchema.shape), ...Object.keys(nodeSpecSchema.shape)]) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${key}\` |`));
      expect({ key, described: row !== undefined && !row.endsWith('|  |') }).toEqual({ key, described: true });
    }
  });
});
