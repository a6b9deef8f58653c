// wrk as the benchmark scripts drive it (wrk-ab.mjs, profile.mjs, login-ab.mjs): two threads, 50
// connections unless told, one of bench/wrk/*.lua, and the refresh tokens it presents written to a file.
import process from 'node:process';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as S from './scenarios.mjs';

export const WRK_THREADS = 2;
export const WRK_CONNECTIONS = 50;
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs wrk for `seconds` with bench/wrk/<script>.lua over `connections`; returns its counts. */
export async function runWrk(url, script, seconds, env = {}, connections = WRK_CONNECTIONS) {
  const args = [`-t${WRK_THREADS}`, `-c${connections}`, `-d${seconds}s`, '-s', join(root, 'bench/wrk', `${script}.lua`), url];
  const { stdout } = await promisify(execFile)('wrk', args, { env: { ...process.env, WRK_THREADS: String(WRK_THREADS), ...env } });
  return {
    requests: Number(/(\d+) requests in/.exec(stdout)?.[1]),
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
  };
}

/** Signs in `count` times and writes the refresh tokens to a file, one per line. */
export async function tokensFile(dir, url, name, count) {
  const pool = S.sessionPool();
  await S.seedSessions(url, pool, count, { workers: 4 });
  const file = join(dir, `${name}.txt`);
  await writeFile(file, `${pool.tokens.join('\n')}\n`);
  return file;
}

/** Writes the seeded admins' login bodies (scenarios.mjs) to a file, one per line, for login.lua. */
export async function loginBodiesFile(dir) {
  const file = join(dir, 'logins.txt');
  await writeFile(file, `${S.loginBodies.join('\n')}\n`);
  return file;
}

/**
 * Warms a server up with logins (login.lua, `bodies` from loginBodiesFile) for 10 s, V8 taking
 * longer to compile a login's path than the others' (bench/README.md, "A login's CPU"), then waits
 * for its hash queue to empty: wrk leaves the logins it sent at its end queued for a hash, and the
 * measured run would find the queue full.
 */
export async function warmUpLogins(server, bodies, connections = WRK_CONNECTIONS) {
  await runWrk(server.url, 'login', 10, bodies, connections);
  await S.waitIdle(server);
}
