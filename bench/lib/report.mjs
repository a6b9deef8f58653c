// The table, the target ratios, the machine; written to bench/results/latest.{json,md}.
import process from 'node:process';
import { URL } from 'node:url';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';

export function machine() {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux
  }
  return {
    cpu,
    cores: os.availableParallelism(),
    logical_cpus: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    loadavg_at_start: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

const fixed = (value, digits) => (value === undefined || value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const rate = (value) => (value === undefined || Number.isNaN(value) ? '-' : value >= 100 ? value.toFixed(0) : value.toFixed(1));
const ms = (value) => (value === undefined || Number.isNaN(value) ? '-' : value >= 100 ? value.toFixed(0) : value.toFixed(2));

/** rows: [{ name, rps, p50, p99, errors, maxRssMB, hwmMB, bareRps }] in display order. */
export function table(rows) {
  const header = ['scenario', 'req/s', '% of bare', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MB', 'VmHWM MB'];
  const lines = rows.map((row) => [
    row.name,
    rate(row.rps),
    row.bareRps > 0 && row.rps !== undefined ? `${((100 * row.rps) / row.bareRps).toFixed(1)}%` : '-',
    ms(row.p50),
    ms(row.p99),
    row.errors === undefined ? '-' : String(row.errors),
    fixed(row.maxRssMB, 0),
    fixed(row.hwmMB, 0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => line[i].length)));
  const format = (cells) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  return [format(header), `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...lines.map(format)].join('\n');
}

function verdict(value, pass) {
  if (value === undefined || Number.isNaN(value)) return 'n/a';
  return pass ? 'PASS' : 'FAIL';
}

/** The targets, each with its measured value and PASS / FAIL (n/a when a scenario was not run). */
export function targets(byName, serverHwmMB) {
  const bare = byName.bare?.rps;
  const share = (name) => (bare > 0 && byName[name] ? byName[name].rps / bare : undefined);
  const out = [];
  const refresh = share('refresh');
  out.push({ target: 'refresh >= 20% of bare', value: refresh, shown: pct(refresh), result: verdict(refresh, refresh >= 0.2) });
  const rotation = share('refresh-rotation');
  const rotationErrors = byName['refresh-rotation']?.errors;
  out.push({
    target: 'refresh-rotation >= 10% of bare, 0 errors',
    value: rotation,
    shown: rotation === undefined ? '-' : `${pct(rotation)}, ${rotationErrors} errors`,
    result: verdict(rotation, rotation >= 0.1 && rotationErrors === 0),
  });
  const raw = byName['argon2-raw']?.rps;
  const login = raw > 0 && byName.login ? byName.login.rps / raw : undefined;
  out.push({
    target: 'login >= 70% of raw argon2id verify rate (all cores)',
    value: login,
    shown: login === undefined ? '-' : `${pct(login)} (${rate(byName.login.rps)} / ${rate(raw)})`,
    result: verdict(login, login >= 0.7),
  });
  const alone = byName.refresh?.p99;
  const storm = byName['login-storm: refresh']?.p99;
  const stormRatio = alone > 0 && storm !== undefined ? storm / alone : undefined;
  out.push({
    target: 'refresh p99 during login storm <= 3x refresh p99 alone',
    value: stormRatio,
    shown: stormRatio === undefined ? '-' : `${stormRatio.toFixed(2)}x (${ms(storm)} ms vs ${ms(alone)} ms)`,
    result: verdict(stormRatio, stormRatio <= 3),
  });
  // invalid-body is driven by the raw-socket generator: compare it with bare under the same one
  const bareRaw = byName['bare (raw sockets)']?.rps ?? bare;
  const invalid = bareRaw > 0 && byName['invalid-body'] ? byName['invalid-body'].rps / bareRaw : undefined;
  out.push({
    target: 'invalid-body (422) >= 50% of bare (same generator)',
    value: invalid,
    shown: invalid === undefined ? '-' : `${pct(invalid)} (${rate(byName['invalid-body'].rps)} / ${rate(bareRaw)})`,
    result: verdict(invalid, invalid >= 0.5),
  });
  out.push({
    target: 'server peak RSS (VmHWM) < 200 MB',
    value: serverHwmMB,
    shown: serverHwmMB === undefined ? '-' : `${serverHwmMB.toFixed(0)} MB`,
    result: verdict(serverHwmMB, serverHwmMB < 200),
  });
  return out;
}

function pct(value) {
  return value === undefined || Number.isNaN(value) ? '-' : `${(100 * value).toFixed(1)}%`;
}

export function targetLines(list) {
  const width = Math.max(...list.map((t) => t.target.length));
  return list.map((t) => `${t.result.padEnd(4)}  ${t.target.padEnd(width)}  ${t.shown}`).join('\n');
}

export function machineLine(m, options) {
  return [
    `machine: ${m.cpu}, ${m.cores} cores (${m.logical_cpus} logical), ${m.memory_gb} GB, ${m.platform}`,
    `node ${m.node}, ${m.date}, load average at start ${m.loadavg_at_start.join(' ')}, at end ${m.loadavg_at_end?.join(' ') ?? '-'}`,
    `run: --db ${options.db} --duration ${options.duration} --warmup ${options.warmup} --connections ${options.connections} --sessions ${options.sessions}; ` +
      'load generator in the same machine (shares the cores with the server)',
  ].join('\n');
}

export async function writeResults(dir, report, markdown) {
  await mkdir(dir, { recursive: true });
  await writeFile(new URL('latest.json', dir), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(new URL('latest.md', dir), markdown);
}

/** Rows measured with the raw-socket generator are compared with bare under that generator. */
const RAW_SOCKET_ROWS = new Set(['invalid-body', 'bare (raw sockets)']);

/** Everything the run prints and writes: { text, markdown, json }. */
export function buildReport({ scenarios, order, serverPeakMB, setup, machine: m, options, notes }) {
  const rows = order
    .filter((name) => scenarios[name])
    .map((name) => ({
      name,
      ...scenarios[name],
      bareRps: RAW_SOCKET_ROWS.has(name) ? (scenarios['bare (raw sockets)']?.rps ?? scenarios.bare?.rps) : scenarios.bare?.rps,
    }));
  const goals = targets(scenarios, serverPeakMB);
  const grid = table(rows);
  const text = [grid, '', targetLines(goals), '', machineLine(m, options)].join('\n');
  const bullets = (lines) => lines.map((line) => `- ${line}`).join('\n');
  const markdown = `# school-auth benchmark\n\n${grid}\n\n\`\`\`\n${targetLines(goals)}\n\`\`\`\n\n${bullets([...machineLine(m, options).split('\n'), ...notes])}\n`;
  const json = { machine: m, options: { ...options, only: [...options.only] }, setup, scenarios, server_peak_rss_mb: serverPeakMB, targets: goals, notes };
  return { text, markdown, json };
}
