import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBehaviourDoc } from '../lib/harness/localcloud/behaviour-doc';

/** Writes docs/aws-behaviour.md from the behaviour catalogue (npm run docs:behaviour). */
const target = join(__dirname, '..', 'docs', 'aws-behaviour.md');
writeFileSync(target, renderBehaviourDoc());
console.log(`wrote ${target}`);
