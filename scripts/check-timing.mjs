#!/usr/bin/env node
/**
 * Login timing check (docs/design.md, "Refused logins": every refusal is indistinguishable in timing).
 *
 * Builds the compiled service (`npm run build` first: this imports ../dist) on a temporary SQLite
 * database with LOGIN_THROTTLE=off, seeds one school with an active and a disabled administrator,
 * then measures login latency through app.inject for four refusals: unknown school, unknown user,
 * wrong password, disabled admin (with its right password). After a warm-up, attempts are
 * interleaved round-robin in a shuffled order per round so that noise spreads over all cases.
 * Prints median and p90 per case (ms) and the largest relative difference between the medians.
 *
 *   node scripts/check-timing.mjs [--attempts N] [--max-diff PCT]
 *
 * --attempts  attempts per case (default 300)
 * --max-diff  exit 1 when the largest difference between medians exceeds PCT percent (default: report only)
 */
import console from 'node:console';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { pino } from 'pino';
import { buildApp } from '../dist/app.js';
import { addAdmin, setAdminEnabled } from '../dist/auth/accounts/admins.js';
import { addSchool } from '../dist/auth/accounts/schools.js';
import { loadConfig } from '../dist/config/config.js';
import { openServices } from '../dist/services.js';

function parseArgs(argv) {
  const options = { attempts: 300, maxDiff: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--attempts' || arg === '--max-diff') {
      const number = Number(value);
      if (value === undefined || !Number.isFinite(number) || number <= 0) usage(`${arg} needs a positive number`);
      if (arg === '--attempts') options.attempts = Math.floor(number);
      else options.maxDiff = number;
      i += 1;
    } else if (arg === '--help' || arg === '-h') {
      usage();
    } else {
      usage(`unknown argument ${arg}`);
    }
  }
  return options;
}

function usage(problem) {
  if (problem !== undefined) console.error(`check-timing: ${problem}`);
  console.error('usage: node scripts/check-timing.mjs [--attempts N] [--max-diff PCT]');
  process.exit(problem === undefined ? 0 : 2);
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

function shuffle(items) {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'school-auth-timing-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOGIN_THROTTLE: 'off', KEY_ACTIVATION_DELAY: '0', LOG_LEVEL: 'silent' });
  const services = await openServices(config);
  const app = await buildApp({ ...services, logger: pino({ level: 'silent' }) });
  try {
    const school = 'timing-school';
    const password = 'correct horse battery staple';
    await addSchool(services, school, undefined);
    await addAdmin(services, { schoolId: school, username: 'active-admin' }, password);
    await addAdmin(services, { schoolId: school, username: 'disabled-admin' }, password);
    await setAdminEnabled(services, { schoolId: school, username: 'disabled-admin' }, false);

    const cases = [
      { name: 'unknown school', body: { school_id: 'no-such-school', username: 'active-admin', password } },
      { name: 'unknown user', body: { school_id: school, username: 'no-such-admin', password } },
      { name: 'wrong password', body: { school_id: school, username: 'active-admin', password: 'wrong horse battery staple' } },
      { name: 'disabled admin', body: { school_id: school, username: 'disabled-admin', password } },
    ];
    const attempt = async (item) => {
      const payload = JSON.stringify(item.body);
      const started = performance.now();
      const response = await app.inject({ method: 'POST', url: '/admin/auth/login', headers: { 'content-type': 'application/json' }, payload });
      const elapsed = performance.now() - started;
      if (response.statusCode !== 401) throw new Error(`${item.name}: expected 401, got ${response.statusCode} ${response.body}`);
      return { elapsed, body: response.body };
    };

    // Every refusal must also be byte-identical.
    const bodies = new Set();
    const warmUp = Math.max(10, Math.min(50, Math.floor(options.attempts / 10)));
    for (let round = 0; round < warmUp; round++) for (const item of shuffle(cases)) bodies.add((await attempt(item)).body);
    const samples = new Map(cases.map((item) => [item.name, []]));
    for (let round = 0; round < options.attempts; round++) {
      for (const item of shuffle(cases)) {
        const { elapsed, body } = await attempt(item);
        bodies.add(body);
        samples.get(item.name).push(elapsed);
      }
    }

    const rows = cases.map((item) => {
      const sorted = [...samples.get(item.name)].sort((a, b) => a - b);
      const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
      return { name: item.name, n: sorted.length, median: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), mean, min: sorted[0], max: sorted.at(-1) };
    });
    const medians = rows.map((row) => row.median);
    const largest = ((Math.max(...medians) - Math.min(...medians)) / Math.min(...medians)) * 100;

    const pad = (text, width) => String(text).padEnd(width);
    const num = (value) => value.toFixed(2).padStart(9);
    console.log(`login timing: ${options.attempts} attempts per case after ${warmUp} warm-up rounds, interleaved; argon2id m=${config.argon2.memoryCost} KiB t=${config.argon2.timeCost} p=${config.argon2.parallelism}`);
    console.log(`${pad('case', 16)} ${pad('n', 5)}${'median ms'.padStart(9)}${'p90 ms'.padStart(10)}${'mean ms'.padStart(10)}${'min ms'.padStart(10)}${'max ms'.padStart(10)}`);
    for (const row of rows) {
      console.log(`${pad(row.name, 16)} ${pad(row.n, 5)}${num(row.median)} ${num(row.p90)} ${num(row.mean)} ${num(row.min)} ${num(row.max)}`);
    }
    console.log(`largest difference between medians: ${largest.toFixed(1)} %`);
    console.log(`distinct 401 bodies: ${bodies.size}${bodies.size === 1 ? ' (byte-identical)' : ` ${JSON.stringify([...bodies])}`}`);
    let failed = bodies.size !== 1;
    if (options.maxDiff !== undefined && largest > options.maxDiff) {
      console.log(`FAIL: ${largest.toFixed(1)} % exceeds --max-diff ${options.maxDiff} %`);
      failed = true;
    }
    process.exitCode = failed ? 1 : 0;
  } finally {
    await app.close();
    await services.database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`check-timing: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
