/** The verifier library follows GET /auth/revocations: tokens of ended sessions are refused within a poll. */
import Fastify from 'fastify';
import { vi, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { systemClock } from '../../src/runtime/clock.js';
import { closeServices, openServices } from '../../src/services.js';
import { createAccessTokenVerifier, requireAccessToken, type AccessTokenVerifier, type VerifierOptions } from '../../src/verifier/index.js';
import { seedAdmin, signIn, testConfig } from '../helpers/app.js';
import { setAdminEnabled } from '../../src/auth/accounts/admins.js';
import { insertSessions } from '../helpers/bulk-sessions.js';
import { logout } from '../helpers/contract.js';
import { createTestDatabase } from '../helpers/database.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The real application on the system clock (jose checks `exp` against it), listening on a free port. */
async function liveServer() {
  const config = testConfig();
  const services = await openServices(config, { clock: systemClock, database: await createTestDatabase('sqlite') });
  const app = await buildApp(services);
  cleanups.push(() => closeServices(services), () => app.close());
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const admin = await seedAdmin(services);
  const verifier = (options: Partial<VerifierOptions> = {}): AccessTokenVerifier => {
    const verify = createAccessTokenVerifier({ issuer: config.issuer, audience: config.audience, jwksUrl: `${base}/.well-known/jwks.json`, ...options });
    cleanups.push(() => verify.close());
    return verify;
  };
  return { app, admin, services, verifier };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: unknown) => String((error as { code?: unknown }).code),
  );
}

describe('createAccessTokenVerifier and the revocation feed', () => {
  it('refuses the token of a logged-out session with ERR_SESSION_REVOKED at the next poll; other sessions stay valid', async () => {
    const { app, admin, verifier } = await liveServer();
    const [ended, live] = [await signIn(app, admin), await signIn(app, admin)];
    const verify = verifier({ revocationsInterval: 100 });
    expect(await codeOf(verify(ended.access_token))).toBe('accepted');
    await logout(app, ended.refresh_token);
    await vi.waitFor(async () => expect(await codeOf(verify(ended.access_token))).toBe('ERR_SESSION_REVOKED'), { timeout: 5000, interval: 50 });
    expect(await codeOf(verify(live.access_token))).toBe('accepted');

    const service = Fastify();
    cleanups.push(() => service.close());
    service.get('/grades', { preHandler: requireAccessToken(verify) }, () => ({ ok: true }));
    const refused = await service.inject({ url: '/grades', headers: { authorization: `Bearer ${ended.access_token}` } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect((await service.inject({ url: '/grades', headers: { authorization: `Bearer ${live.access_token}` } })).statusCode).toBe(200);
  });

  it('knows sessions ended before it started, from its first poll', async () => {
    const { app, admin, verifier } = await liveServer();
    const ended = await signIn(app, admin);
    await logout(app, ended.refresh_token);
    expect(await codeOf(verifier()(ended.access_token))).toBe('ERR_SESSION_REVOKED');
    expect(await codeOf(verifier({ revocationsUrl: false })(ended.access_token))).toBe('accepted');
  });

  it('follows the feed page by page: a session listed after 2000 others is refused from its first poll', async () => {
    const { app, admin, services, verifier } = await liveServer();
    await insertSessions(services, admin.username, 2000);
    await setAdminEnabled(services, { schoolId: admin.schoolId, username: admin.username }, false);
    await setAdminEnabled(services, { schoolId: admin.schoolId, username: admin.username }, true);
    const [ended, live] = [await signIn(app, admin), await signIn(app, admin)];
    await logout(app, ended.refresh_token);
    const verify = verifier();
    expect(await codeOf(verify(ended.access_token))).toBe('ERR_SESSION_REVOKED');
    expect(await codeOf(verify(live.access_token))).toBe('accepted');
  });

  it('with the feed unreachable beyond revocationsMaxStaleness, refuses every token by default (503 from requireAccessToken), or accepts with "accept"', async () => {
    const { app, admin, verifier } = await liveServer();
    const { access_token: token } = await signIn(app, admin);
    const unreachable = { revocationsUrl: 'http://127.0.0.1:9/auth/revocations', revocationsMaxStaleness: 0 };
    const closed = verifier(unreachable);
    expect(await codeOf(closed(token))).toBe('ERR_REVOCATIONS_UNAVAILABLE');
    // A feed never read refuses every token unless told otherwise (verifier-fail-closed.test.ts).
    const unread = { ...unreachable, whenRevocationsNeverRead: 'accept' as const };
    expect(await codeOf(verifier({ ...unread, whenRevocationsStale: 'accept' })(token))).toBe('accepted');
    expect(await codeOf(verifier({ ...unread, revocationsMaxStaleness: 60_000 })(token))).toBe('accepted');
    expect(await codeOf(verifier({ ...unreachable, revocationsMaxStaleness: 60_000 })(token))).toBe('ERR_REVOCATIONS_UNAVAILABLE');
    const service = Fastify();
    cleanups.push(() => service.close());
    service.get('/grades', { preHandler: requireAccessToken(closed) }, () => ({ ok: true }));
    const answer = await service.inject({ url: '/grades', headers: { authorization: `Bearer ${token}` } });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toEqual({ detail: 'Service temporarily unavailable' });
  });

  it('still applies maxTokenAge', async () => {
    const { app, admin, verifier } = await liveServer();
    const { access_token: token } = await signIn(app, admin);
    expect(await codeOf(verifier({ maxTokenAge: 899 })(token))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
  });
});
