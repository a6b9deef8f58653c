import { describe, expect, it } from 'vitest';
import { operatorDocuments, readRepoFile } from './markdown.js';

// A newcomer on a fresh machine reads the README's first lines and nothing else: they must start
// the service and run the tests, with the commands CI itself runs.

const README = readRepoFile('README.md');
const scripts = (JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts;

describe('the README, first lines', () => {
  const opening = README.split('\n').slice(0, 6).join('\n');

  it('start the service and run the whole test suite', () => {
    expect(opening).toMatch(/^ {4}npm ci && npm start\b/m);
    expect(opening).toMatch(/^ {4}npm test\b/m);
  });

  it('name scripts that exist, the test one being what CI runs', () => {
    expect(scripts.start).toContain('dist/cli/main.js serve');
    expect(scripts.test).toContain('vitest run');
    expect(readRepoFile('.ci/run')).toMatch(/^npm test$/m);
  });

  it('stay within 300 lines for the whole README', () => {
    expect(README.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });
});

describe('commands in the README, docs/ and deploy/', () => {
  // Outside the checkout, a bare `npx school-auth` fetches whatever package of that name the
  // registry has, and runs it.
  it('never run a bare npx school-auth', () => {
    const files = [...operatorDocuments(), 'CHANGELOG.md', 'ARCHITECTURE.md', 'Dockerfile', 'deploy/school-auth.service'];
    const bare = files.flatMap((file) =>
      [...readRepoFile(file).matchAll(/npx((?:\s+--?[a-z][a-z-]*)*)\s+school-auth\b/g)]
        .filter((match) => !match[1]!.split(/\s+/).includes('--no-install'))
        .map((match) => `${file}: ${match[0]}`),
    );
    expect(bare).toEqual([]);
  });
});
