import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/database.js';
import { cleanupOps, startServer, type RunningServer } from '../helpers/ops-server.js';

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const result = await runCli(args, { cwd: process.cwd(), env });
  if (result.code !== 0) throw new Error(`school-auth ${args.join(' ')} failed (${result.code}): ${result.stdout}${result.stderr}`);
  return result.stdout;
}

function failedLogin(server: RunningServer, username: string): Promise<Response> {
  return fetch(`${server.url}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ school_id: 'lincoln', username, password: 'wrong password' }),
  });
}

/** Two real `serve` processes on one PostgreSQL database, each running its sealer every second. */
describe.runIf(TEST_DIALECTS.includes('postgres'))('the audit sealer with two instances on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let env: Record<string, string>;
  let servers: RunningServer[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'school-auth-audit-'));

  beforeAll(async () => {
    database = await createPostgresDatabase();
    env = { DATABASE_URL: database.url, LOGIN_THROTTLE: 'off', AUDIT_SEAL_INTERVAL: '1', ISSUER: 'https://auth.test' };
    // LOG_LEVEL=warn: checkpoint lines are written all the same.
    servers = await Promise.all([0, 1].map(() => startServer({ ...env, LOG_LEVEL: 'warn' })));
    await cli(['school', 'add', 'lincoln'], env);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map(({ server }) => server.stop()));
    await database?.drop();
    await cleanupOps();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one chain without gaps or duplicates while both write events, each checkpoint logged once', async () => {
    for (let round = 0; round < 8; round += 1) {
      const answers = await Promise.all(servers.flatMap((server, i) => [0, 1, 2].map((n) => failedLogin(server, `user-${i}-${round}-${n}`))));
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(401));
      await sleep(300);
    }
    // The school, the signing key the first instance created (keys.created), and the failed logins.
    const written = 2 + 8 * 6;
    let seqs: number[] = [];
    for (const deadline = Date.now() + 20_000; seqs.length < written && Date.now() < deadline; await sleep(250)) {
      seqs = (await cli(['events', 'export', '--since', '1'], env)).trimEnd().split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { seq: number }).seq);
    }
    expect(seqs).toEqual(Array.from({ length: written }, (_, i) => i + 1));

    const checkpointSeqs = () =>
      servers
        .flatMap(({ server }) => server.logLines().filter((line) => line.msg === 'audit checkpoint'))
        .map((line) => (line.audit_checkpoint as { seq: number }).seq)
        .sort((x, y) => x - y);
    // A checkpoint's log line reaches this process through a pipe, possibly after the export saw its commit.
    await expect.poll(() => checkpointSeqs().at(-1), { timeout: 5_000 }).toBe(written);
    const loggedSeqs = checkpointSeqs();
    expect(new Set(loggedSeqs).size).toBe(loggedSeqs.length);
    expect(loggedSeqs.at(-1)).toBe(written);

    const shipped = join(dir, 'both.log');
    writeFileSync(shipped, servers.map(({ server }) => server.stdout).join(''));
    expect(await cli(['events', 'verify', '--against', shipped], env)).toBe(
      `ok: ${written} sealed events and ${loggedSeqs.length} checkpoints checked\nok: ${loggedSeqs.length} shipped checkpoints in ${shipped} match the database\n`,
    );
    const exits = await Promise.all(servers.map(({ server }) => server.stop()));
    expect(exits).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  }, 90_000);
});
