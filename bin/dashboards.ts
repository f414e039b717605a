// Writes dashboards/ (the Grafana dashboard and its provisioning files) from the metric
// catalogue: `npm run dashboards`. tests/deploy/grafana.test.ts fails when they differ.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { dashboardFiles } from '../lib/deploy/grafana';

const root = join(__dirname, '..', 'dashboards');
for (const [path, text] of Object.entries(dashboardFiles())) {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
