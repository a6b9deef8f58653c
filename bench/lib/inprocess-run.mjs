// One run of bench/inprocess-ab.mjs: node bench/lib/inprocess-run.mjs <tree> <refresh|rotation|invalid> <requests>
// Prints one JSON line: CPU microseconds (user + system, all threads) per request through
// app.inject() at 20 concurrent requests, and requests per second.
import process from 'node:process';
import console from 'node:console';
import { existsSync, mkdtempSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [tree, scenario, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 3000);
// The first path that exists: builds before and after the move to domain folders both load.
const imp = async (...paths) => {
  const found = paths.find((p) => existsSync(`${tree}/dist/${p}`)) ?? paths[0];
  return import(pathToFileURL(`${tree}/dist/${found}`).href);
};
const { loadConfig } = await imp('config/config.js', 'config.js');
const { openServices } = await imp('services.js');
const { buildApp } = await imp('app.js');
const { addSchool } = await imp('auth/accounts/schools.js', 'auth/schools.js');
const { addAdmin } = await imp('auth/accounts/admins.js', 'auth/admins.js');
const { pino } = await import(pathToFileURL(`${tree}/node_modules/pino/pino.js`).href);
const dir = mkdtempSync('/tmp/inproc-');
const pgUrl = process.env.BENCH_PG_URL;
const env = { ...(pgUrl ? { DATABASE_URL: pgUrl, ISSUER: 'http://bench' } : {}), DATA_DIR: dir, KEY_ACTIVATION_DELAY: '0', LOGIN_THROTTLE: 'off', MANAGEMENT_PORT: 'off', REFRESH_TOKEN_ROTATION: scenario === 'rotation' ? 'on' : 'off', LOG_LEVEL: 'silent' };
const config = loadConfig(env);
// Builds from before AppContext take (config, clock?, database?) and fail on the options object.
let services;
try {
  services = await openServices(config, { logger: pino({ level: 'silent' }) });
} catch {
  services = await openServices(config);
}
const app = await buildApp({ ...services, logger: pino({ level: 'silent' }) });
await addSchool(services, 'lh', undefined);
await addAdmin(services, { schoolId: 'lh', username: 'alice' }, 'correct horse battery staple');
const post = (url, body) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body });
const C = 20;
const tokens = [];
for (let i = 0; i < C; i++) tokens.push(JSON.parse((await post('/admin/auth/login', JSON.stringify({ school_id: 'lh', username: 'alice', password: 'correct horse battery staple' }))).body).refresh_token);
async function one(slot) {
  if (scenario === 'invalid') { const r = await post('/auth/refresh', '{"school_id":'); if (r.statusCode !== 422) throw new Error(r.body); return; }
  const r = await post('/auth/refresh', JSON.stringify({ refresh_token: tokens[slot] }));
  if (r.statusCode !== 200) throw new Error(r.body);
  if (scenario === 'rotation') tokens[slot] = JSON.parse(r.body).refresh_token;
}
async function round(count) {
  let i = 0; const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: C }, async (_, slot) => { while (i++ < count) await one(slot); }));
  const c = process.cpuUsage(c0); const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { cpu: (c.user + c.system) / count, rate: count / ms * 1000 };
}
await round(500);
const r = await round(n);
console.log(JSON.stringify({ tree, scenario, cpu_us: +r.cpu.toFixed(1), rate: Math.round(r.rate) }));
await app.close();
process.exit(0);
