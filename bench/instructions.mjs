#!/usr/bin/env node
// Instructions a request costs the server, counted by callgrind: a measure that a busy machine
// does not move (it counts work, not time), for differences smaller than wrk's noise:
//   node bench/instructions.mjs <tree> [refresh|rotation|invalid|login|idle] [--limit] [--warm-up=N] [--window=N] [--windows=3]
// Needs valgrind (Debian: apt-get install valgrind). Seeds sessions with <tree>'s own server,
// then starts it again as `npm start` does under callgrind (every thread in one count; user space
// only, not the kernel; lib/counted.mjs) and sends --warm-up requests, 16 at a time, so that V8
// has compiled the path, then --windows windows of --window requests (lib/count-service.mjs has
// the defaults; idle counts windows of seconds with no request). For each window it prints the
// instructions per request and, for the median window, what ran them (lib/callgrind.mjs).
// --limit counts the scenario's limit instead (limit-server.mjs; for the 422, bare-server.mjs).
// V8 still compiles and collects now and then, so windows differ; the kinds that do neither are
// steadier than the sum. Callgrind slows the server down many times over: a run takes minutes.
import process from 'node:process';
import console from 'node:console';
import { parseArgs } from 'node:util';
import { describeCount } from './lib/counted.mjs';
import { countLimit, countService, WINDOWS } from './lib/count-service.mjs';

const { values, positionals } = parseArgs({
  options: { 'warm-up': { type: 'string' }, window: { type: 'string' }, windows: { type: 'string', default: '3' }, limit: { type: 'boolean', default: false } },
  allowPositionals: true,
});
// With --limit the first word is the scenario: there is no tree.
const [tree, scenario = 'refresh'] = values.limit ? [undefined, ...positionals] : positionals;
if ((tree === undefined && !values.limit) || WINDOWS[scenario] === undefined || (values.limit && scenario === 'idle')) {
  process.stderr.write('usage: node bench/instructions.mjs <tree> [refresh|rotation|invalid|login|idle] [--warm-up=N] [--window=N] [--windows=3]\n       node bench/instructions.mjs --limit refresh|rotation|invalid|login\n');
  process.exit(2);
}
const windows = { windows: Number(values.windows) };
if (values['warm-up'] !== undefined) windows.warmUp = Number(values['warm-up']);
if (values.window !== undefined) windows[scenario === 'idle' ? 'seconds' : 'window'] = Number(values.window);
const counted = values.limit ? await countLimit(scenario, windows) : await countService(tree, scenario, windows);
const unit = scenario === 'idle' ? 'a second' : 'a request';
console.log(`${values.limit ? `${scenario} limit` : `${tree} ${scenario}`}: ${describeCount(counted)} instructions ${unit}, median (range) of ${counted.perUnit.length} windows (${counted.unexpected} unexpected answers)`);
for (const [kind, cost] of [...counted.byKind].sort((a, b) => b[1] - a[1])) {
  console.log(`  ${cost.toFixed(0).padStart(10)}  ${((100 * cost) / counted.median).toFixed(1).padStart(5)}%  ${kind}`);
}
