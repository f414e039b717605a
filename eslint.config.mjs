import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.serverless/**', '.esbuild/**', 'coverage/**', '.tmp/**', '*.config.js', '*.config.mjs', 'bin/fleet.js'] },
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
    // Entry points talk to people on stdout/stderr; everything else uses the logger.
    files: ['bin/**', 'bench/**', 'lib/drill/render.ts', 'lib/localcloud/serve.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['tests/**'],
    // jest's asymmetric matchers are typed any.
    rules: { '@typescript-eslint/unbound-method': 'off', 'no-console': 'off', '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
);
