import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** The documents a reader follows links through: the README, every page under docs/ and the bench's page. */
const documents = [
  'README.md',
  'bench/README.md',
  ...readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name)),
].sort();

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings, repeated ones numbered as GitHub numbers them. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = slugOf(match[1] as string);
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

interface Link {
  from: string;
  target: string;
}

/** Relative links (and images) of a document, and in-page anchors. */
function linksOf(document: string): Link[] {
  const text = prose(readFileSync(path.join(root, document), 'utf8'));
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ from: document, target }));
}

/** What is wrong with a link, or undefined when it resolves to a file (and, for a Markdown file, its heading). */
function problemOf({ from, target }: Link): string | undefined {
  const [file = '', anchor] = target.split('#');
  const resolved =
    file === '' ? path.join(root, from) : path.resolve(root, path.dirname(from), decodeURI(file));
  if (!resolved.startsWith(root)) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return undefined;
  return anchorsOf(resolved).has(anchor) ? undefined : `no heading #${anchor}`;
}

const links = documents.flatMap(linksOf);

describe('links between the documents', () => {
  it('are found in the README and under docs/', () => {
    expect(documents).toContain('docs/decisions/README.md');
    expect(links.filter((link) => link.from === 'README.md').length).toBeGreaterThan(20);
  });

  it('resolve to a file in the repository, and to a heading when they name one', () => {
    const broken = links.flatMap((link) => {
      const problem = problemOf(link);
      return problem ? [`${link.from}: ${link.target}: ${problem}`] : [];
    });
    expect(broken).toEqual([]);
  });
});
