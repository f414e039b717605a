import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { anchorsOf, linksOf } from '../helpers/markdown';

const ROOT = join(__dirname, '..', '..');
const PAGES = [
  ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].map((f) => join(ROOT, f)),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f)),
];

describe('links in README.md and docs/', () => {
  it.each(PAGES.map((p) => [relative(ROOT, p), p]))('%s: every relative link and anchor resolves', (_name, page) => {
    const broken = linksOf(page).filter((link) => {
      const [path = '', anchor] = link.split('#');
      const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
      if (!existsSync(target)) return true;
      if (anchor === undefined || statSync(target).isDirectory() || !target.endsWith('.md')) return false;
      return !anchorsOf(target).has(anchor);
    });
    expect(broken).toEqual([]);
  });
});
