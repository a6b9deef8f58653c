import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { AppContext } from '../../src/auth/context.js';
import { sqliteDatabase } from '../../src/db/connect.js';
import { buildManagementApp } from '../../src/http/management-app.js';
import { createLogger } from '../../src/runtime/logger.js';
import { closeServices, openServices } from '../../src/services.js';
import { postJson, seedAdmin, signIn, testConfig } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { BODIES } from '../helpers/contract.js';
import { failWritesWhenFull } from '../helpers/full-disk.js';
import { parseLogLines } from '../helpers/log-lines.js';

/**
 * The server's answers on a full disk, with SQLite's failure injected at the driver
 * (helpers/full-disk.ts); disk-full.test.ts fills a real file system under a server process.
 */
describe('a full disk under the SQLite server: what clients and the operator see', () => {
  let dir: string;
  let file: string;
  let disk: { full: boolean };
  let services: AppContext;
  let app: FastifyInstance;
  let management: FastifyInstance;
  let output: string[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'school-auth-full-'));
    file = join(dir, 'school-auth.sqlite');
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    disk = failWritesWhenFull(sqlite);
    output = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (output.push(chunk.toString('utf8')), done()) });
    services = await openServices(testConfig(), { database: sqliteDatabase(sqlite), clock: new TestClock(), logger: createLogger('info', sink) });
    app = await buildApp(services);
    management = await buildManagementApp(services, app);
  });

  afterEach(async () => {
    await Promise.all([app.close(), management.close()]);
    await closeServices(services);
    rmSync(dir, { recursive: true, force: true });
  });

  const fullDiskLines = () => parseLogLines(output.join('')).filter((line) => /disk full/i.test(line.msg));

  it('answers 503 with Retry-After, never 500; one log line names the disk and the file; not ready until a write succeeds', async () => {
    const admin = await seedAdmin(services);
    const before = await signIn(app, admin);
    disk.full = true;
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const response = await postJson(app, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password });
      expect({ status: response.statusCode, retryAfter: response.headers['retry-after'], body: response.body }).toEqual({ status: 503, retryAfter: '5', body: BODIES.unavailable });
    }
    // Reads go on: a refresh without rotation only reads.
    expect((await postJson(app, '/auth/refresh', { refresh_token: before.refresh_token })).statusCode).toBe(200);
    expect((await management.inject({ url: '/readyz' })).statusCode).toBe(503);
    expect((await management.inject({ url: '/readyz' })).statusCode).toBe(503);
    expect(fullDiskLines()).toHaveLength(1);
    expect(fullDiskLines()[0]!.msg).toContain(`disk full: no space left on the device holding ${file}`);
    expect(output.join('')).not.toContain('cannot rollback');
    expect(output.join('')).not.toContain('unhandled error');

    disk.full = false;
    expect((await management.inject({ url: '/readyz' })).statusCode).toBe(200);
    // Nothing answered 200 was lost, and the refusals did not count as failed logins.
    expect((await postJson(app, '/auth/refresh', { refresh_token: before.refresh_token })).statusCode).toBe(200);
    for (let attempt = 0; attempt < 3; attempt += 1) await signIn(app, admin);
    expect(fullDiskLines()).toHaveLength(1);
  });

  it('turns ready again by itself once writes succeed, without a request', async () => {
    await seedAdmin(services);
    disk.full = true;
    expect((await management.inject({ url: '/readyz' })).statusCode).toBe(200);
    const response = await postJson(app, '/admin/auth/login', { school_id: 'lincoln-high', username: 'alice', password: 'wrong password, any' });
    expect(response.statusCode).toBe(503);
    expect(services.databaseOutage.up).toBe(false);
    disk.full = false;
    for (let waited = 0; !services.databaseOutage.up && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(services.databaseOutage.up).toBe(true);
    expect(parseLogLines(output.join('')).map((line) => line.msg)).toContainEqual(expect.stringMatching(/^database back after \d+ s; 1 request refused meanwhile$/));
  });
});
