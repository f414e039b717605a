import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigDoc } from '../lib/deploy/config-doc';

/** Writes docs/configuration.md from the configuration schema (npm run docs:config). */
const target = join(__dirname, '..', 'docs', 'configuration.md');
writeFileSync(target, renderConfigDoc());
console.log(`wrote ${target}`);
