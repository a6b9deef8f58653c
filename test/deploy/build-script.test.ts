import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { runTool } from './tools.js';

// scripts/build.mjs where TypeScript is not installed, as after `npm prune --omit=dev`: in a
// directory of its own, outside any node_modules. Building with it: install.test.ts (npm ci).

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function checkout(withDist: boolean): string {
  dir = mkdtempSync(join(tmpdir(), 'school-auth-build-'));
  cpSync(join(REPO_ROOT, 'scripts', 'build.mjs'), join(dir, 'scripts', 'build.mjs'));
  if (withDist) {
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), '// built\n');
  }
  return join(dir, 'scripts', 'build.mjs');
}

describe('scripts/build.mjs without TypeScript', () => {
  it('as prepare (--keep-built), keeps the dist/ there and succeeds', async () => {
    const result = await runTool(process.execPath, [checkout(true), '--keep-built']);
    expect(result).toMatchObject({ code: 0, stderr: expect.stringContaining('keeping the dist/ already built') });
    expect(readFileSync(join(dir, 'dist', 'cli', 'main.js'), 'utf8')).toBe('// built\n');
  });

  it('as npm run build, fails and leaves dist/ as it was', async () => {
    const result = await runTool(process.execPath, [checkout(true)]);
    expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot build dist/: TypeScript is not installed') });
    expect(readFileSync(join(dir, 'dist', 'cli', 'main.js'), 'utf8')).toBe('// built\n');
  });

  it('as prepare with no dist/, fails', async () => {
    const result = await runTool(process.execPath, [checkout(false), '--keep-built']);
    expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining('TypeScript is not installed') });
    expect(existsSync(join(dir, 'dist'))).toBe(false);
  });
});
