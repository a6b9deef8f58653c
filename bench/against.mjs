#!/usr/bin/env node
// No release slower than the last: the instructions a refresh costs a build of <ref> (a git tag or
// commit) against <tree>'s, counted alternately (lib/count-service.mjs, callgrind). <ref> is
// checked out into a temporary git worktree of this repository, built there with `npm ci` (whose
// prepare script builds dist/; `npm run build` in that worktree if it did not), and removed after.
//   node bench/against.mjs <ref> <tree> [pairs=1]
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { countService } from './lib/count-service.mjs';
import { describeCount } from './lib/counted.mjs';
import { alternate, median } from './lib/pairs.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));

/** Runs `work(tree)` with <ref> built in a temporary worktree, removed afterwards. */
export async function withRefTree(ref, work, log = console.log) {
  const dir = await mkdtemp(join(os.tmpdir(), 'school-auth-against-'));
  const tree = join(dir, 'tree');
  const run = (command, args, cwd) => execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  try {
    log(`building ${ref} in a temporary worktree (npm ci)`);
    run('git', ['worktree', 'add', '--detach', tree, ref], repo);
    run('npm', ['ci', '--no-audit', '--no-fund'], tree);
    if (!existsSync(join(tree, 'dist/cli/main.js'))) run('npm', ['run', 'build'], tree);
    chmodSync(join(tree, 'dist/cli/main.js'), 0o755);
    return await work(tree);
  } finally {
    try {
      run('git', ['worktree', 'remove', '--force', tree], repo);
    } catch {
      run('git', ['worktree', 'prune'], repo);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** Refresh instructions of <ref>'s build and <tree>'s, `pairs` alternating pairs; ratio tree/ref. */
export async function againstRef(ref, tree, { pairs = 1, log = console.log } = {}) {
  return withRefTree(ref, async (refTree) => {
    const results = await alternate(
      pairs,
      () => countService(refTree, 'refresh'),
      () => countService(tree, 'refresh'),
      (pair, oursFirst, a, b) => log(`pair ${pair}${oursFirst ? ' (ours first)' : ''}: ${ref} ${describeCount(a)}, ours ${describeCount(b)} instructions a refresh`),
    );
    const perPair = results.map(({ a, b }) => b.median / a.median);
    return { perPair, median: median(perPair), ref: results.at(-1).a, ours: results.at(-1).b };
  }, log);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [ref, tree, pairs = '1'] = process.argv.slice(2);
  if (ref === undefined || tree === undefined) {
    process.stderr.write('usage: node bench/against.mjs <ref> <tree> [pairs=1]\n');
    process.exit(2);
  }
  const { perPair, median: m } = await againstRef(ref, tree, { pairs: Number(pairs) });
  console.log(`refresh instructions, ours/${ref}: ${perPair.map((x) => x.toFixed(3)).join(' ')}, median ${m.toFixed(3)}x`);
}
