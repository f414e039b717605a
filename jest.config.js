/** Unit tests run in-process; system tests spawn the CLI and the local cloud as child processes. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs', ignoreDynamic: true },
      },
    ],
    // commander is an ES module only; Jest's own module loader requires ES modules only from
    // Node 24.9, so on Node 22 it is compiled to CommonJS like the tests.
    '/node_modules/commander/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!commander/)'],
  setupFilesAfterEnv: ['<rootDir>/tests/setup.ts'],
  testTimeout: 20000,
  // Drills are timing-sensitive on 2 cores: one test file at a time.
  maxWorkers: 1,
};
