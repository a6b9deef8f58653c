import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { cleanupOps, tempDir } from '../helpers/ops-server.js';
import { runCli } from '../helpers/cli-run.js';

// The tests run concurrently (each in its own directory); their children are reaped at the end.
afterAll(cleanupOps);

const INVALID = { PORT: 'abc', JWT_ALG: 'HS256', REFRESH_TOKEN_ROTATION: 'maybe' };

describe.concurrent('school-auth config check', () => {
  it('prints the effective configuration as JSON under the variables\' names, with the database password masked', async ({ expect }) => {
    const cwd = tempDir();
    const result = await runCli(['config', 'check'], {
      cwd,
      env: { DATABASE_URL: 'postgres://u:secret@h/db', ISSUER: 'https://auth.test', PORT: '8123', ACCESS_TOKEN_TTL: '600', DATA_DIR: join(cwd, 'data') },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).not.toContain('secret');
    const config = JSON.parse(result.stdout);
    expect(config.PORT).toBe(8123);
    expect(config.ACCESS_TOKEN_TTL).toBe(600);
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.REFRESH_TOKEN_ROTATION).toBe(false);
    expect(config.DATABASE_URL).toMatch(/^postgres:\/\/u:[^@]*@h\/db$/);
    expect(config.DATABASE_URL).not.toContain('secret');
    expect(config.DATABASE_POOL_SIZE).toBe(10);
    // Only what applies: SQLite's settings mean nothing on PostgreSQL, and no internal name shows.
    expect(Object.keys(config)).not.toContain('DATA_DIR');
    expect(Object.keys(config)).not.toContain('SQLITE_SYNCHRONOUS');
    for (const name of Object.keys(config)) expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it('on SQLite shows DATA_DIR and SQLITE_SYNCHRONOUS, and no DATABASE_* setting', async ({ expect }) => {
    const cwd = tempDir();
    const result = await runCli(['config', 'check'], { cwd, env: { DATA_DIR: join(cwd, 'data'), LOGIN_THROTTLE: 'off' } });
    expect(result.code, result.stderr).toBe(0);
    const config = JSON.parse(result.stdout);
    expect(config).toMatchObject({ DATA_DIR: join(cwd, 'data'), SQLITE_SYNCHRONOUS: 'NORMAL', LOGIN_THROTTLE: false, ISSUER: 'http://127.0.0.1:8000' });
    expect(Object.keys(config).filter((name) => name.startsWith('DATABASE_') || name.startsWith('THROTTLE_'))).toEqual([]);
  });

  it('masks a password given as ?password= or ?sslpassword= in DATABASE_URL', async ({ expect }) => {
    const cwd = tempDir();
    const url = 'postgres://u@h/db?password=query-secret&sslpassword=key-secret';
    const result = await runCli(['config', 'check'], { cwd, env: { DATABASE_URL: url, ISSUER: 'https://auth.test', DATA_DIR: join(cwd, 'data') } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).not.toMatch(/query-secret|key-secret/);
    expect(JSON.parse(result.stdout).DATABASE_URL).toBe('postgres://u@h/db?password=****&sslpassword=****');
  });

  it('names every invalid variable in one message and exits non-zero', async ({ expect }) => {
    const result = await runCli(['config', 'check'], { cwd: tempDir(), env: INVALID });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout).toBe('');
    for (const name of Object.keys(INVALID)) expect(result.stderr).toContain(name);
    expect(result.stderr.match(/invalid configuration/g)).toHaveLength(1);
    // A person's mistake, not a bug: no stack trace.
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('stops `serve` with the same single message, before it listens', async ({ expect }) => {
    const cwd = tempDir();
    const result = await runCli(['serve'], { cwd, env: INVALID, timeoutMs: 15_000 });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    for (const name of Object.keys(INVALID)) expect(result.stderr).toContain(name);
    expect(result.stderr.match(/invalid configuration/g)).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).not.toMatch(/listening/i);
    // It stopped before opening the database.
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('reads .env from the working directory, and real environment variables win over it', async ({ expect }) => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), ['PORT=4321', 'AUDIENCE=from-dotenv', 'ACCESS_TOKEN_TTL=1200', '# a comment', ''].join('\n'));
    const result = await runCli(['config', 'check'], { cwd, env: { AUDIENCE: 'from-env' } });
    expect(result.code, result.stderr).toBe(0);
    const config = JSON.parse(result.stdout);
    expect(config.PORT).toBe(4321);
    expect(config.ACCESS_TOKEN_TTL).toBe(1200);
    expect(config.AUDIENCE).toBe('from-env');
    expect(config.DATA_DIR).toBe(join(cwd, 'data'));
  });

  it('validates values that come from .env too, naming the variable', async ({ expect }) => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'JWT_ALG=none\n');
    const result = await runCli(['config', 'check'], { cwd, env: {} });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('JWT_ALG');
  });
});
