#!/usr/bin/env node
// The targets of bench/README.md, each a line: target, figure, pass or fail.
//   node bench/targets.mjs <tree> [--against <ref>] [--only idle,refresh,rotation,invalid,login,peer,against] [--pairs 3] [--seconds 5]
// (`node bench/run.mjs --targets [...]` runs it on this checkout.) Counted instructions
// (callgrind, every thread of the server: lib/count-service.mjs), each the median of three
// windows with their range: an idle service; refresh, rotation and the 422 against their limits
// (limit-server.mjs, bare-server.mjs); logins outside the argon2id hash against the login limit's;
// then requests a second under wrk against oidc-provider (peer-wrk.mjs), and with --against the
// refresh instructions against a build of <ref> (against.mjs).
import console from 'node:console';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { againstRef } from './against.mjs';
import { countLimit, countService } from './lib/count-service.mjs';
import { describeCount } from './lib/counted.mjs';
import { peerRatios } from './peer-wrk.mjs';

const ALL = ['idle', 'refresh', 'rotation', 'invalid', 'login', 'peer', 'against'];
const USAGE = `usage: node bench/targets.mjs <tree> [--against <ref>] [--only ${ALL.join(',')}] [--pairs 3] [--seconds 5]\n`;
let parsed;
try {
  parsed = parseArgs({ options: { against: { type: 'string' }, only: { type: 'string' }, pairs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' } }, allowPositionals: true });
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals: [tree] } = parsed;
const only = new Set(values.only?.split(',') ?? ALL.filter((t) => t !== 'against' || values.against !== undefined));
if (tree === undefined || [...only].some((t) => !ALL.includes(t)) || (only.has('against') && values.against === undefined)) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const started = Date.now();
const log = (message) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${message}\n`);
const lines = [];
/** One line: `figure` against `limit` (at most, or at least with `atLeast`). */
function target(name, figure, value, limit, atLeast = false) {
  const pass = atLeast ? value >= limit : value <= limit;
  const line = `${name} | ${figure} | ${pass ? 'pass' : 'FAIL'}`;
  lines.push(line);
  console.log(line);
}
const x = (n) => `${n.toFixed(2)}x`;
const ARGON2 = 'argon2id (@node-rs/argon2)';
/** Instructions outside the argon2id hash: the total less what ran in @node-rs/argon2's object. */
const outsideHash = (c) => ({ ...c, median: c.median - c.byKind.get(ARGON2), perUnit: c.perUnit.map((n) => n - c.byKind.get(ARGON2)) });

if (only.has('idle')) {
  log('idle: our service, no requests, 30 s then three windows of 60 s');
  const idle = await countService(tree, 'idle');
  target('idle service < 50,000 instructions/s', `${describeCount(idle)} instructions/s`, idle.median, 50_000);
}
for (const [scenario, name, limitName, limit] of [
  ['refresh', 'refresh', 'the limit server', 1.2],
  ['rotation', 'rotation', 'the rotation limit', 1.3],
  ['invalid', 'the 422', 'bare node:http', 2],
]) {
  if (!only.has(scenario)) continue;
  log(`${scenario}: our service, then ${limitName}, under callgrind`);
  const ours = await countService(tree, scenario);
  const bare = await countLimit(scenario);
  const unexpected = ours.unexpected + bare.unexpected > 0 ? `; ${ours.unexpected}/${bare.unexpected} unexpected answers` : '';
  target(`${name} <= ${limit}x ${limitName} (instructions a request)`, `${x(ours.median / bare.median)}: ${describeCount(ours)} vs ${describeCount(bare)}${unexpected}`, ours.median / bare.median, limit);
}
if (only.has('login')) {
  log('login: our service, then the login limit, under callgrind');
  const ours = await countService(tree, 'login');
  const bare = await countLimit('login');
  const [a, b] = [outsideHash(ours), outsideHash(bare)];
  const hash = `the hash itself ${Math.round(ours.byKind.get(ARGON2)).toLocaleString('en-US')} and ${Math.round(bare.byKind.get(ARGON2)).toLocaleString('en-US')}`;
  target('login outside argon2id <= 2x the login limit (instructions a login)', `${x(a.median / b.median)}: ${describeCount(a)} vs ${describeCount(b)} (${hash})`, a.median / b.median, 2);
}
if (only.has('peer')) {
  log(`peer: ours and oidc-provider under wrk, ${values.pairs} alternating pairs of ${values.seconds} s a load`);
  const ratios = await peerRatios(tree, { pairs: Number(values.pairs), seconds: Number(values.seconds), log });
  const names = { refresh: 'refresh', rotation: 'rotation', error: 'our 422 vs its 400' };
  for (const [scenario, { perPair, median }] of Object.entries(ratios)) {
    target(`${names[scenario]} >= 3x oidc-provider (requests/s, wrk)`, `${x(median)} (pairs ${perPair.map(x).join(' ')})`, median, 3, true);
  }
}
if (only.has('against')) {
  log(`against ${values.against}: refresh instructions, alternating`);
  const { perPair, median, ref, ours } = await againstRef(values.against, tree, { log });
  target(`refresh <= 1.05x ${values.against} (instructions a request)`, `${x(median)} (pairs ${perPair.map(x).join(' ')}; last pair ${describeCount(ours)} vs ${describeCount(ref)})`, median, 1.05);
}
console.log(`\n${lines.filter((l) => l.endsWith('pass')).length} of ${lines.length} targets pass (${((Date.now() - started) / 60_000).toFixed(0)} min; ${(await import('node:os')).default.availableParallelism()} cores)`);
