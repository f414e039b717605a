#!/usr/bin/env node
// The `fleet` command. TypeScript is loaded through tsx so a checkout works right after `npm ci`.
// The Lambda runtime is Node 22; the SDK's notice about Node 20 is for long-lived installs, not here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs');
require('./fleet.ts');
