// Counting a server's instructions with callgrind, for instructions.mjs and targets.mjs: how the
// server is launched, how a window is cut (callgrind_control --dump), how requests are sent.
// Every thread of the process is counted into one total (--separate-threads=no; callgrind collects
// from the start, for all threads; the kernel is not counted), and no child process
// (--trace-children=no).
import { execFileSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import process from 'node:process';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { instructionsByKind } from './callgrind.mjs';
import { median } from './pairs.mjs';

// valgrind names its control files after USER and HOST, and callgrind_control must find them.
export const CALLGRIND_USER = { USER: 'bench', LOGNAME: 'bench', HOST: '127.0.0.1' };

/**
 * A launcher for startServer/startBare that runs node under callgrind, writing into `dir`, and
 * `dump(pid)`: the instructions counted since the last dump, in all and by kind (callgrind.mjs).
 */
export function callgrind(dir, name = 'callgrind') {
  const vgdbPrefix = `--vgdb-prefix=${join(dir, `${name}-vgdb`)}`;
  const launcher = ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', '--trace-children=no', '--separate-threads=no', vgdbPrefix, `--callgrind-out-file=${join(dir, `${name}.out`)}`];
  const controlEnv = { ...process.env, ...CALLGRIND_USER };
  const pattern = new RegExp(`^${name}\\.out\\.\\d+$`);
  const dump = async (pid) => {
    execFileSync('callgrind_control', [vgdbPrefix, '--dump', String(pid)], { env: controlEnv, stdio: 'ignore' });
    const dumps = (await readdir(dir)).filter((file) => pattern.test(file));
    const last = dumps.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).at(-1);
    return instructionsByKind(join(dir, last));
  };
  return { launcher, dump };
}

/** Sends `requests` calls of `send(connection, n)`, `connections` at a time. */
export function closedLoop(connections, send) {
  return async (requests) => {
    let next = 0;
    await Promise.all(Array.from({ length: connections }, async (_, connection) => {
      while (next < requests) await send(connection, next++);
    }));
  };
}

/**
 * Warms the server up with `load(warmUp)`, then counts `windows` windows of `load(window)` each
 * (or, with `seconds`, of that many seconds with no load: `unit` is then a second). Returns each
 * window's instructions a unit, their median, spread (max - min) and the median window's kinds.
 */
export async function countWindows({ dump, pid, load, warmUp = 0, window, windows = 3, seconds }) {
  if (seconds === undefined) await load(warmUp);
  else await setTimeout(warmUp * 1000);
  await dump(pid);
  const counted = [];
  for (let i = 0; i < windows; i += 1) {
    if (seconds === undefined) await load(window);
    else await setTimeout(seconds * 1000);
    counted.push(await dump(pid));
  }
  const unit = seconds ?? window;
  const perUnit = counted.map(({ total }) => total / unit);
  const middle = [...counted].sort((a, b) => a.total - b.total)[Math.floor(counted.length / 2)];
  const byKind = new Map([...middle.byKind].map(([kind, cost]) => [kind, cost / unit]));
  return { perUnit, median: median(perUnit), spread: Math.max(...perUnit) - Math.min(...perUnit), byKind };
}

/** "1,234,567 (1,200,000-1,300,000)": a count's median and the range of its windows. */
export function describeCount({ median: middle, perUnit }) {
  const f = (n) => Math.round(n).toLocaleString('en-US');
  return `${f(middle)} (${f(Math.min(...perUnit))}-${f(Math.max(...perUnit))})`;
}
