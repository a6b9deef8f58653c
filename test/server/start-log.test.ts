import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createPostgresDatabase, TEST_DIALECTS } from '../helpers/database.js';
import { parseLogLines } from '../helpers/log-lines.js';
import { cleanupOps, startServer, type RunningServer } from '../helpers/ops-server.js';

// Concurrent tests: children and directories are reaped once all are done.
afterAll(cleanupOps);

/** The line follows the listeners' own: it may reach the pipe just after /healthz answers. */
function startLine(server: RunningServer): Promise<Record<string, unknown>> {
  return vi.waitFor(
    () => {
      const line = parseLogLines(server.stdout()).find((logged) => logged.msg === 'school-auth started');
      if (line === undefined) throw new Error(`no start line yet in:\n${server.stdout()}`);
      return line;
    },
    { timeout: 5000, interval: 50 },
  );
}

/** The one line an operator reads to know what started: which database, which issuer, which addresses. */
describe.concurrent('the start log line', () => {
  it('on SQLite names the database file, the issuer, the public and the management address', async () => {
    const server = await startServer({ LOG_LEVEL: 'info' });
    const line = await startLine(server);
    expect(line).toMatchObject({
      level: 30,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown,
      database: { kind: 'sqlite', file: join(server.dataDir, 'school-auth.sqlite') },
      issuer: `http://127.0.0.1:${server.port}`,
      address: server.url,
      management_address: server.managementUrl,
    });
  });

  it.runIf(TEST_DIALECTS.includes('postgres'))('on PostgreSQL names host, port and database, never the password', async () => {
    const database = await createPostgresDatabase();
    try {
      const url = new URL(database.url);
      url.password = 'never-logged-secret';
      const server = await startServer({ LOG_LEVEL: 'info', DATABASE_URL: url.toString(), ISSUER: 'https://auth.school.example', MANAGEMENT_PORT: 'off' });
      const line = await startLine(server);
      expect(line).toMatchObject({
        database: { kind: 'postgresql', host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), user: 'postgres' },
        issuer: 'https://auth.school.example',
        address: server.url,
        management_address: null,
      });
      expect(server.stdout() + server.stderr()).not.toContain('never-logged-secret');
      server.child.kill('SIGTERM');
      await server.exited;
    } finally {
      await database.drop();
    }
  });
});
