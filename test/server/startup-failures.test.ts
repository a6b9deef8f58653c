import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { TEST_POSTGRES_URL } from '../helpers/database.js';
import { cliTest as it, SLOW, type Workspace } from '../helpers/cli-workspace.js';
import { freePort } from '../helpers/free-port.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * What an operator sees when the service cannot start on its database: one line on stderr that
 * names what is wrong and the variable to check, and the exit code docs/operations.md documents
 * (3: DATA_DIR unusable, 4: PostgreSQL unreachable or refusing). Real processes, real sockets.
 */
async function serve(ws: Workspace, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const server = ServerProcess.start({ cwd: ws.root, env: { PORT: '0', ISSUER: 'https://auth.school.example', ...env } });
  ws.track(server.child);
  const exit = await server.waitExit(30_000);
  return { code: exit.code, stderr: server.stderr };
}

function postgresUrl(change: (url: URL) => void): string {
  const url = new URL(TEST_POSTGRES_URL);
  change(url);
  return url.toString();
}

describe.concurrent('start-up failures on the database', () => {
  it('a refused PostgreSQL port: exit 4, one line naming DATABASE_URL, host and port', SLOW, async ({ ws }) => {
    const port = await freePort();
    const result = await serve(ws, { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      `school-auth: cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused; check that PostgreSQL is running there and the host and port in DATABASE_URL\n`,
    );
  });

  it('a database that does not exist: exit 4, naming it and DATABASE_URL', SLOW, async ({ ws }) => {
    const result = await serve(ws, { DATABASE_URL: postgresUrl((url) => (url.pathname = '/no_such_database_school_auth')) });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^school-auth: PostgreSQL at [^ ]+ has no database "no_such_database_school_auth"; create it \(createdb no_such_database_school_auth\) or correct the database name in DATABASE_URL\n$/);
  });

  it('a role PostgreSQL refuses: exit 4, naming the user and DATABASE_URL, never the password', SLOW, async ({ ws }) => {
    const result = await serve(ws, { DATABASE_URL: postgresUrl((url) => ((url.username = 'no_such_role_school_auth'), (url.password = 'hunter2-secret'))) });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^school-auth: PostgreSQL at [^ ]+ refused user "no_such_role_school_auth": .+; check the user and password in DATABASE_URL\n$/);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('a host name that does not resolve: exit 4, naming DATABASE_URL', SLOW, async ({ ws }) => {
    const result = await serve(ws, { DATABASE_URL: 'postgres://postgres@no-such-host.invalid:5432/postgres' });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe('school-auth: cannot connect to PostgreSQL at no-such-host.invalid:5432: the host name does not resolve; check the host in DATABASE_URL\n');
  });

  it('a DATA_DIR that cannot be created: exit 3, one line naming DATA_DIR', SLOW, async ({ ws }) => {
    const file = join(ws.root, 'a-file');
    writeFileSync(file, '');
    const result = await serve(ws, { DATA_DIR: join(file, 'data') });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(`school-auth: DATA_DIR ${join(file, 'data')} cannot be used (not a directory); set DATA_DIR to a directory this user can create and write\n`);
  });

  it('the same explanations from the other commands: migrate and a read-only listing', SLOW, async ({ ws }) => {
    const port = await freePort();
    const env = { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, ISSUER: 'https://auth.school.example' };
    for (const args of [['migrate'], ['school', 'list']]) {
      const result = await ws.run(args, { env });
      expect(result.code, args.join(' ')).toBe(4);
      expect(result.stderr).toMatch(/^school-auth: cannot connect to PostgreSQL at 127\.0\.0\.1:\d+: connection refused; .*DATABASE_URL\n$/);
    }
  });
});
