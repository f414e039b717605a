import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import stylistic from '@stylistic/eslint-plugin';

/** What never ships: the drill harness with the local cloud, the drill model, and the deploy tooling. */
const HARNESS = [
  '**/harness',
  '**/harness/**',
  '**/core/drill/**',
  '**/deploy',
  '**/deploy/**',
  '**/tests/**',
  '**/bench/**',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.serverless/**',
      '.esbuild/**',
      'coverage/**',
      '.tmp/**',
      '*.config.js',
      '*.config.mjs',
      'bin/fleet.js',
      'resources/*.cjs',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // Prettier wraps code at 120; this also holds comments, strings and URLs to it.
    plugins: { '@stylistic': stylistic },
    rules: { '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true }] },
  },
  {
    // No import cycles anywhere.
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // Code that ships (the Lambda functions, the node's agent and worker, and the libraries they
    // use) never imports the drill harness, the local cloud or the deploy tooling.
    files: ['functions/**', 'agent/**', 'lib/**'],
    ignores: ['lib/harness/**', 'lib/core/drill/**', 'lib/deploy/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: HARNESS,
              message: 'shipping code must not import the drill harness, the local cloud or the deploy tooling',
            },
          ],
        },
      ],
    },
  },
  {
    // Shipping files stay small enough to read in one sitting.
    files: ['functions/**', 'agent/**', 'lib/**', 'bin/**'],
    ignores: ['lib/harness/**', 'lib/core/drill/**', 'lib/deploy/**'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
  {
    // Entry points talk to people on stdout/stderr; everything else uses the logger.
    files: ['bin/**', 'bench/**', 'lib/harness/drill/render.ts', 'lib/harness/localcloud/serve.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The reference pipeline's stages are plain Node, run as they are on a node: no types to check.
    files: ['examples/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-console': 'off' },
  },
  {
    files: ['tests/**'],
    // jest's asymmetric matchers are typed any.
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      'no-console': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
