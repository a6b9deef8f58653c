#!/usr/bin/env node
// Our service against the best peer, oidc-provider (peer-server.mjs), under wrk -t2 -c50, in one
// run, alternating: refresh (reusable tokens), rotation, and the cheapest error (our 422 of a
// truncated body, its 400 of a missing parameter). Each load runs 2 s to warm up, then --seconds
// measured; each pair runs both servers, ours first in odd pairs. Prints each pair and, per
// scenario, the median of ours/peer requests a second.
//   node bench/peer-wrk.mjs <tree> [pairs=3] [--seconds=5]
import console from 'node:console';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { alternate, median } from './lib/pairs.mjs';
import { serverEnv, startBare, startServer, stopChild } from './lib/procs.mjs';
import * as S from './lib/scenarios.mjs';
import { WRK_CONNECTIONS, runWrk, tokensFile } from './lib/wrk.mjs';

export const PEER_SCENARIOS = ['refresh', 'rotation', 'error'];
const bench = fileURLToPath(new URL('.', import.meta.url));

async function measure(url, script, env, seconds) {
  await runWrk(url, script, 2, env);
  return runWrk(url, script, seconds, env);
}

async function ours(tree, seconds) {
  const cwd = await mkdtemp(join(os.tmpdir(), 'school-auth-peer-'));
  const entry = join(resolve(tree), 'dist/cli/main.js');
  const run = {};
  try {
    await S.seedAdmins(entry, { env: serverEnv(cwd, false), cwd });
    for (const rotation of [false, true]) {
      const server = await startServer({ entry, env: serverEnv(cwd, rotation), cwd });
      try {
        const tokens = { TOKENS_FILE: await tokensFile(cwd, server.url, rotation ? 'rotating' : 'reusable', rotation ? WRK_CONNECTIONS + 20 : 200) };
        if (rotation) run.rotation = await measure(server.url, 'rotation', tokens, seconds);
        else [run.refresh, run.error] = [await measure(server.url, 'refresh', tokens, seconds), await measure(server.url, 'invalid', {}, seconds)];
      } finally {
        await stopChild(server.child);
      }
    }
    return run;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

async function peer(seconds) {
  const dir = await mkdtemp(join(os.tmpdir(), 'school-auth-peer-'));
  const run = {};
  try {
    for (const rotation of [false, true]) {
      // A rotation's warm-up consumes its tokens: the measured run has its own.
      const TOKENS_FILE = join(dir, 'tokens.txt');
      const server = await startBare(join(bench, 'peer-server.mjs'), { PATH: process.env.PATH, TOKENS: '240', TOKENS_FILE, ROTATION: rotation ? 'on' : 'off' });
      try {
        const env = { TOKENS_FILE, ROTATION: rotation ? 'on' : 'off' };
        if (rotation) {
          const tokens = (await readFile(TOKENS_FILE, 'utf8')).trim().split('\n');
          const [warm, measured] = [join(dir, 'warm.txt'), join(dir, 'measured.txt')];
          await writeFile(warm, `${tokens.slice(0, 120).join('\n')}\n`);
          await writeFile(measured, `${tokens.slice(120).join('\n')}\n`);
          await runWrk(server.url, 'peer', 2, { ...env, TOKENS_FILE: warm });
          run.rotation = await runWrk(server.url, 'peer', seconds, { ...env, TOKENS_FILE: measured });
        }
        else [run.refresh, run.error] = [await measure(server.url, 'peer', env, seconds), await measure(server.url, 'peer', { ...env, MISSING: 'on' }, seconds)];
      } finally {
        await stopChild(server.child);
      }
    }
    return run;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `pairs` alternating pairs; returns, per scenario, each pair's ours/peer ratio and their median. */
export async function peerRatios(tree, { pairs = 3, seconds = 5, log = console.log } = {}) {
  const describe = (run) => PEER_SCENARIOS.map((s) => `${s} ${run[s].rps.toFixed(0)}/s${run[s].non2xx > 0 && s !== 'error' ? ` (${run[s].non2xx} refused)` : ''}`).join(', ');
  const results = await alternate(pairs, () => ours(tree, seconds), () => peer(seconds), (pair, peerFirst, a, b) => log(`pair ${pair}${peerFirst ? ' (peer first)' : ''}: ours ${describe(a)}; oidc-provider ${describe(b)}`));
  return Object.fromEntries(PEER_SCENARIOS.map((s) => {
    const perPair = results.map(({ a, b }) => a[s].rps / b[s].rps);
    return [s, { perPair, median: median(perPair) }];
  }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({ options: { seconds: { type: 'string', default: '5' } }, allowPositionals: true });
  const [tree, pairs = '3'] = positionals;
  if (tree === undefined) {
    process.stderr.write('usage: node bench/peer-wrk.mjs <tree> [pairs=3] [--seconds=5]\n');
    process.exit(2);
  }
  const ratios = await peerRatios(tree, { pairs: Number(pairs), seconds: Number(values.seconds) });
  for (const [s, { perPair, median: m }] of Object.entries(ratios)) console.log(`${s}: ours/oidc-provider ${perPair.map((x) => x.toFixed(2)).join(' ')}, median ${m.toFixed(2)}x`);
}
