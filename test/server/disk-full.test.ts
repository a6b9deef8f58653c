import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BODIES } from '../helpers/contract.js';
import { parseLogLines } from '../helpers/log-lines.js';
import { cleanupOps, loginHttp, OPS_SCHOOL, OPS_USERNAME, sleep, startServer, tempDir, type RunningServer } from '../helpers/ops-server.js';
import { runCli } from '../helpers/cli-run.js';

/**
 * A real server process whose DATA_DIR is on a small tmpfs, filled up while it answers logins.
 * Mounting needs root (and a system that allows it); elsewhere this is skipped with a warning,
 * and disk-full-injected.test.ts covers the same answers with SQLite's error injected.
 */
function mountTmpfs(megabytes: number): string | undefined {
  const point = mkdtempSync(join(tmpdir(), 'school-auth-full-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=700`, 'tmpfs', point]).status === 0;
  if (mounted) return point;
  rmSync(point, { recursive: true, force: true });
  return undefined;
}

function unmount(point: string): void {
  spawnSync('umount', [point]);
  rmSync(point, { recursive: true, force: true });
}

const probe = mountTmpfs(1);
if (probe === undefined) console.warn('\n*** cannot mount a tmpfs here: the full-disk test on a real file system is SKIPPED ***\n');
else unmount(probe);

/** Writes `file` until the file system has no byte left. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 16, 1 << 12, 1 << 9, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const PASSWORD = 'a password for the full disk';
const mounts: string[] = [];

afterEach(async () => {
  await cleanupOps();
  for (const point of mounts.splice(0)) unmount(point);
});

async function readiness(server: RunningServer): Promise<number> {
  return (await fetch(`${server.managementUrl}/readyz`)).status;
}

async function refreshes(server: RunningServer, token: string): Promise<number> {
  const response = await fetch(`${server.url}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: token }) });
  return response.status;
}

describe.runIf(probe !== undefined)('a full disk under a running server (SQLite on a 4 MiB tmpfs)', () => {
  it('answers 503 with Retry-After, logs the full disk once with its path, is not ready until a write succeeds, loses no 200 and recovers by itself', { timeout: 120_000 }, async () => {
    const point = mountTmpfs(4)!;
    mounts.push(point);
    const dataDir = join(point, 'data');
    // Seeded before the server starts, so that its WAL starts empty: a write then needs new space.
    const cwd = tempDir();
    const seed = [['school', 'add', OPS_SCHOOL], ['admin', 'add', '--school', OPS_SCHOOL, '--username', OPS_USERNAME, '--password-stdin']];
    for (const args of seed) expect((await runCli(args, { cwd, env: { DATA_DIR: dataDir }, input: `${PASSWORD}\n` })).code).toBe(0);
    const server = await startServer({ DATA_DIR: dataDir }, { cwd });
    const tokens: string[] = [];
    const login = async () => {
      const response = await loginHttp(server, PASSWORD);
      const body = await response.text();
      if (response.status === 200) tokens.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
    };
    expect((await login()).status).toBe(200);

    const filler = join(point, 'filler');
    fillUp(filler);
    const answers = [];
    for (let attempt = 0; attempt < 30; attempt += 1) answers.push(await login());
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) expect(answer).toEqual({ status: 503, retryAfter: '5', body: BODIES.unavailable });
    expect(await readiness(server)).toBe(503);

    const file = join(dataDir, 'school-auth.sqlite');
    const fullDisk = parseLogLines(server.stdout()).filter((line) => /disk full/i.test(line.msg));
    expect(fullDisk).toHaveLength(1);
    expect(fullDisk[0]!.msg).toContain(file);
    expect(server.stdout()).not.toContain('cannot rollback');
    expect(server.stdout()).not.toContain('"msg":"unhandled error"');

    rmSync(filler);
    let ready = 503;
    for (let waited = 0; ready !== 200 && waited < 15_000; waited += 250) {
      await sleep(250);
      ready = await readiness(server);
    }
    expect(ready).toBe(200);
    expect((await login()).status).toBe(200);
    for (const token of tokens) expect(await refreshes(server, token)).toBe(200);
    expect(parseLogLines(server.stdout()).filter((line) => /disk full/i.test(line.msg))).toHaveLength(1);
  });
});
