import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const ROOTS = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'serverless.yml',
  'package.json',
  '.ci',
  'docs',
  'lib',
].concat(['agent', 'functions', 'bin', 'bench', 'tests', 'resources', 'examples', 'dashboards']);
const TEXT = /\.(md|ts|mjs|js|cjs|json|yml|yaml|sh|service|txt)$|^[^.]+$/;

const files = (path: string): string[] =>
  statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => files(join(path, name))) : [path];

// Spelled in pieces so that this file does not match itself.
const OUTSIDE = new RegExp(['\\.\\./sha', 'red\\b|DESI', 'GN\\.md'].join(''));
const ISSUE = new RegExp(['\\b[Ii]ssues? ', '\\d+\\b'].join(''));

describe('the repository stands alone', () => {
  const texts = ROOTS.flatMap((r) => files(join(ROOT, r)))
    .filter((f) => TEXT.test(f.split('/').at(-1) ?? ''))
    .map((f) => ({ file: relative(ROOT, f), text: readFileSync(f, 'utf8') }));

  it('reads some of each kind', () => {
    expect(texts.length).toBeGreaterThan(300);
  });

  it.each([
    ['a file outside the repository', OUTSIDE],
    ['an issue number', ISSUE],
  ])('no text refers to %s', (_what, pattern) => {
    const hits = texts.flatMap(({ file, text }) =>
      text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});
