/**
 * The password-recovery HTTP tests' world: the real application on one dialect with a logger whose
 * lines the test reads, a way to wait until every answered request for a code has done its
 * background work, and small helpers for the two endpoints.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, vi } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { requireAdmin } from '../../../src/auth/accounts/admins.js';
import { openRecoveryCode } from '../../../src/auth/accounts/recovery-code.js';
import type { NotificationPayload } from '../../../src/auth/notifications.js';
import type { Dialect } from '../../../src/db/database.js';
import { BackgroundWork } from '../../../src/runtime/background-work.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { closeServices, openServices } from '../../../src/services.js';
import { seedAdmin, testConfig, type TestApp } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { createTestDatabase } from '../../helpers/database.js';

export const NEW_PASSWORD = 'a freshly recovered passphrase 7';
export const FORGOT = '/admin/auth/password/forgot';
export const RESET = '/admin/auth/password/reset';
export const INVALID_CODE_BODY = '{"detail":"Invalid or expired recovery code"}';

export interface RecoveryApp extends TestApp {
  /** Every log line the app wrote (JSON, one a line), at LOG_LEVEL (warn unless given). */
  readonly logs: string[];
}

/**
 * Every call of BackgroundWork.run (each request for a code asks the app's BackgroundWork to run
 * one task), watched, not changed: its `this` is what `settle` waits on. Each test file has its
 * own modules, so the spy lasts for the file only.
 */
const runs = vi.spyOn(BackgroundWork.prototype, 'run');

/** Apps of one dialect, each closed after its test. */
export function useRecoveryApps(dialect: Dialect) {
  const opened: RecoveryApp[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
    runs.mockClear();
  });
  return async (env: Record<string, string> = {}): Promise<RecoveryApp> => {
    const config = testConfig({ LOG_LEVEL: 'warn', ...env });
    const logs: string[] = [];
    const logger = createLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
    const clock = new TestClock();
    const services = await openServices(config, { clock, logger, database: await createTestDatabase(dialect) });
    const app = await buildApp(services);
    const t: RecoveryApp = {
      app,
      services,
      clock,
      config,
      logs,
      close: async () => {
        await app.close();
        await closeServices(services);
      },
    };
    opened.push(t);
    return t;
  };
}

/**
 * Resolves once the background work of every request for a code answered so far is done; fails
 * when any of it failed (a failure is only logged, and would otherwise look like "nothing mailed").
 */
export async function settle(t: RecoveryApp): Promise<void> {
  const works = new Set(runs.mock.contexts as BackgroundWork[]);
  await Promise.all([...works].map((work) => work.idle()));
  const failed = t.logs.filter((line) => line.includes('background task failed'));
  if (failed.length > 0) throw new Error(`a request for a recovery code failed in the background:\n${failed.join('')}`);
}

export interface Who {
  readonly schoolId: string;
  readonly username: string;
}

/** POST /password/forgot from the socket peer `ip`, then waits for its background work. */
export async function forgot(t: RecoveryApp, who: Who, ip = '127.0.0.1', headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const response = await t.app.inject({
    method: 'POST',
    url: FORGOT,
    remoteAddress: ip,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ school_id: who.schoolId, username: who.username }),
  });
  await settle(t);
  return response;
}

/** POST /password/reset from the socket peer `ip`. */
export function reset(t: TestApp, who: Who, code: string, newPassword = NEW_PASSWORD, ip = '127.0.0.1'): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: RESET,
    remoteAddress: ip,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ school_id: who.schoolId, username: who.username, code, new_password: newPassword }),
  });
}

/** An admin of `schoolId` (lincoln-high by default) with a password, told at `address` when one is given. */
export async function adminWithAddress(t: TestApp, username: string, address: string | undefined, schoolId = 'lincoln-high') {
  const seeded = await seedAdmin(t.services, { schoolId, username });
  const ref = { schoolId, username };
  if (address !== undefined) await setAdminEmail(t.services, ref, address);
  const { id } = await requireAdmin(t.services, ref);
  return { ...seeded, ref, id };
}

/** The recovery e-mails of the outbox, oldest first. */
export function recoveryMessages(t: TestApp) {
  return t.services.db.selectFrom('outbox').selectAll().where('type', '=', 'password.recovery').orderBy('created_at').orderBy('id').execute();
}

/** The code a recovery message carries, opened as the delivery opens it. */
export function codeIn(t: TestApp, message: { payload: string; target: string }): string {
  const payload = JSON.parse(message.payload) as NotificationPayload;
  return openRecoveryCode(payload.data.code ?? '', message.target, t.config.keyEncryption);
}

/**
 * The code of the newest recovery message (to `adminId` when given: messages written in the same
 * millisecond of the test clock are in no particular order); fails when there is none.
 */
export async function latestCode(t: TestApp, adminId?: string): Promise<string> {
  const last = (await recoveryMessages(t)).filter((message) => adminId === undefined || message.target === adminId).at(-1);
  if (last === undefined) throw new Error('no recovery e-mail in the outbox');
  return codeIn(t, last);
}

export function passwordRecoveryRows(t: TestApp) {
  return t.services.db.selectFrom('password_recoveries').selectAll().execute();
}

/** The headers of an answer without those that differ on every request. */
export function stableHeaders(response: LightMyRequestResponse): Record<string, unknown> {
  const { date: _date, 'x-request-id': _id, ...rest } = response.headers;
  return rest;
}

/** Signs in; returns the answer as is (status and body). */
export function login(t: TestApp, who: Who, password: string, ip = '127.0.0.1'): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/admin/auth/login',
    remoteAddress: ip,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ school_id: who.schoolId, username: who.username, password }),
  });
}
