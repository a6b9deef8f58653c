// Builds dist/ from src/: `npm run build`, and npm's `prepare` (npm ci, npm pack, npm install -g
// of a checkout) with --keep-built. Without TypeScript, which `npm prune --omit=dev` removes, a
// build cannot succeed: dist/ is then left as it is, never deleted first (docs/deploy.md).
import { spawnSync } from 'node:child_process';
import console from 'node:console';
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';

const root = join(import.meta.dirname, '..');
const program = join(root, 'dist', 'cli', 'main.js');

function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

const tsc = compiler();
if (tsc === undefined) {
  if (process.argv.includes('--keep-built') && existsSync(program)) {
    console.error('school-auth: TypeScript is not installed (no dev dependencies): keeping the dist/ already built');
    process.exit(0);
  }
  console.error('school-auth: cannot build dist/: TypeScript is not installed; npm ci installs it with the dev dependencies');
  process.exit(1);
}

// A fresh dist/: nothing of a source file deleted since the last build survives.
rmSync(join(root, 'dist'), { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (status !== 0) process.exit(status ?? 1);
chmodSync(program, 0o755);
