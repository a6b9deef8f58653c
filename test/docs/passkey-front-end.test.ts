/**
 * The front-end code docs/second-factor.md shows for passkey sign-in is the page the browser test
 * runs (test/fixtures/passkey-front-end.html): a change to one that the other lacks fails here.
 */
import { describe, expect, it } from 'vitest';
import { readRepoFile, section } from './markdown.js';

function fenced(markdown: string, language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(markdown);
  return match?.[1] ?? '';
}

describe('the passkey front-end example', () => {
  const docs = section(readRepoFile('docs/second-factor.md'), 'Passkey sign-in');
  const page = readRepoFile('test/fixtures/passkey-front-end.html');
  const script = /<script type="module">\n([\s\S]*?)<\/script>/.exec(page)?.[1] ?? '';

  it('shows the fixture script, with the API address and without its first comment', () => {
    const expected = script
      .split('\n')
      .filter((line) => !line.startsWith('// The browser JavaScript of docs/'))
      .join('\n')
      .replace("'__API__'", "'https://auth.school.example'");
    expect(expected).toContain('/admin/auth/passkey/login');
    expect(fenced(docs, 'js')).toBe(expected);
  });

  it('shows the markup the script needs, as the fixture has it', () => {
    const markup = fenced(docs, 'html').trim().split('\n');
    expect(markup.length).toBeGreaterThan(0);
    for (const line of markup) expect(page).toContain(line);
  });
});
