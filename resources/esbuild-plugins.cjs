// esbuild plugins shared by the function bundles (serverless-esbuild's `plugins` setting) and the
// node bundles (lib/harness/localcloud/bundle.ts).
const { join } = require('node:path');

/**
 * zod's classic API and its core re-export every locale's messages (`z.locales`: 264 KiB of the
 * 446 KiB zod adds to a minified bundle) though only English is ever configured, and a namespace
 * re-export cannot be tree-shaken. This resolves those imports to a module holding English alone, so a
 * bundle carries, parses and keeps in memory one locale (bench/footprint.ts measures the effect).
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.c?js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)) return undefined;
      const en = join(args.importer, '..', '..', 'locales', args.path.endsWith('.cjs') ? 'en.cjs' : 'en.js');
      return { path: 'zod-locales-english', namespace: 'zod-english-only', pluginData: { en } };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `module.exports = { en: require(${JSON.stringify(args.pluginData.en)}).default };`,
      loader: 'js',
      resolveDir: join(args.pluginData.en, '..'),
    }));
  },
};

module.exports = [zodEnglishOnly];
