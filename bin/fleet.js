#!/usr/bin/env node
// The `fleet` command. TypeScript is loaded through tsx so a checkout works right after `npm ci`.
// Older Nodes would fail deep inside (commander is an ES module required from CommonJS, fauxqs
// imports node:sqlite), so the floor of package.json "engines" is checked first, and named.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`fleet: Node.js ${process.version} is too old: v22.12 or newer is required`);
  process.exit(1);
}
// The SDK's notice about Node versions is for long-lived installs, not a CLI run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs');
require('./fleet.ts');
