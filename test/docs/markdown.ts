import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/cli-run.js';

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

/**
 * The Markdown files that tell operators and callers what to run: the README and docs/. (Not the
 * changelog: it names commands of past releases too.)
 */
export function operatorDocuments(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** The text under `## heading`, up to the next heading of that level. */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) return '';
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The first cell of each body row of the tables in `text` (header and rule rows skipped). */
export function firstCells(text: string): string[] {
  const rows = text.split('\n').filter((line) => line.startsWith('|'));
  return rows
    .filter((row, index) => !/^\|[-| :]+\|$/.test(row) && !/^\|[-| :]+\|$/.test(rows[index + 1] ?? ''))
    .map((row) => row.split(/(?<!\\)\|/)[1]!.trim());
}

export function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
}

/**
 * Every `school-auth ...` a reader is shown: inline code that starts with it, and lines of fenced
 * blocks that run it (a word follows it: `docker stop school-auth` or `chown school-auth /etc/...`
 * name the user or container). Returns what follows `school-auth `, up to a comment, pipe or `&&`.
 */
export function commandUsages(markdown: string): string[] {
  const fenced = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const inline = codeSpans(prose).filter((span) => /^(npx --no-install )?school-auth /.test(span));
  const runs = fenced
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .flatMap((line) => [...line.matchAll(/(?:^|[\s(|;&])school-auth (?!school-auth\b)([a-z][a-z-]*(?=\s|$).*)/g)].map((match) => `school-auth ${match[1]!}`));
  return [...inline, ...runs].map((usage) => usage.replace(/^(npx --no-install )?school-auth /, '').split(/\s(?:&&|\|\||;|#)\s|\s\|\s/)[0]!.trim());
}
