import { readFileSync } from 'node:fs';

/** Markdown as GitHub renders it, for the tests of docs/: anchors and relative links. */

/** GitHub's anchor for a heading: lower case, markup and punctuation dropped (`_` and `-` kept), spaces to hyphens. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}_ -]/gu, '')
    .replace(/ /g, '-');

/** The text outside fenced code blocks. */
const outsideCode = (text: string): string => text.replace(/```[\s\S]*?```/g, '');

/** Every anchor a page has: its headings' slugs (numbered when repeated) and its `<a id="…">` targets. */
export const anchorsOf = (page: string): Set<string> => {
  const text = outsideCode(readFileSync(page, 'utf8'));
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id ?? '');
  return anchors;
};

/** Every relative link of a page, outside code blocks and code spans. */
export const linksOf = (page: string): string[] => {
  const text = outsideCode(readFileSync(page, 'utf8')).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((target) => !/^[a-z]+:/i.test(target));
};

/** The part of a page under a `## ` heading, up to the next one. */
export const sectionOf = (text: string, heading: string): string => {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
};
