/**
 * The verifier library fails closed: no token is accepted before the revocation feed has been
 * read once, and a withdrawn signing key stops verifying when the JWKS copy expires (the
 * response's max-age, at most 60 s), not after jose's default of 10 minutes.
 */
import Fastify from 'fastify';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { revokeSigningKey } from '../../src/auth/keys/key-revocation.js';
import { closeServices, openServices } from '../../src/services.js';
import { createAccessTokenVerifier, type AccessTokenVerifier, type VerifierOptions } from '../../src/verifier/index.js';
import { seedAdmin, signIn, testConfig } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/database.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track(verify: AccessTokenVerifier): AccessTokenVerifier {
  cleanups.push(() => verify.close());
  return verify;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: unknown) => String((error as { code?: unknown }).code),
  );
}

/** The real application on a clock the test moves (starting now, so jose agrees on `exp`), listening on a free port. */
async function liveServer() {
  const config = testConfig();
  const clock = new TestClock(Date.now());
  const services = await openServices(config, { clock, database: await createTestDatabase('sqlite') });
  const app = await buildApp(services);
  cleanups.push(() => closeServices(services), () => app.close());
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const admin = await seedAdmin(services);
  const options = { issuer: config.issuer, audience: config.audience, jwksUrl: `${base}/.well-known/jwks.json`, now: () => clock.now() };
  return { app, admin, clock, services, options };
}

/** A JWKS endpoint answering with the given Cache-Control, counting its fetches. */
async function jwksServer(cacheControl: string) {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const server = Fastify();
  let fetches = 0;
  server.get('/.well-known/jwks.json', (_request, reply) => {
    fetches += 1;
    return reply.header('cache-control', cacheControl).send({ keys: [jwk] });
  });
  cleanups.push(() => server.close());
  const base = await server.listen({ host: '127.0.0.1', port: 0 });
  const sign = (nowMs: number) =>
    new SignJWT({ school_id: 's', username: 'u', sid: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer('https://auth.test')
      .setAudience('school-admin')
      .setSubject('a')
      .setIssuedAt(Math.floor(nowMs / 1000))
      .setExpirationTime(Math.floor(nowMs / 1000) + 900)
      .sign(privateKey);
  return { jwksUrl: `${base}/.well-known/jwks.json`, sign, fetches: () => fetches };
}

describe('the verifier before its first read of the revocation feed', () => {
  it('refuses every token while the feed has never been read, unless told to accept them', async () => {
    const { app, admin, options } = await liveServer();
    const { access_token: token } = await signIn(app, admin);
    const unreachable: Partial<VerifierOptions> = { revocationsUrl: 'http://127.0.0.1:9/auth/revocations' };
    expect(await codeOf(track(createAccessTokenVerifier({ ...options, ...unreachable }))(token))).toBe('ERR_REVOCATIONS_UNAVAILABLE');
    const lenient = track(createAccessTokenVerifier({ ...options, ...unreachable, whenRevocationsNeverRead: 'accept' }));
    expect(await codeOf(lenient(token))).toBe('accepted');
    expect(await codeOf(track(createAccessTokenVerifier(options))(token))).toBe('accepted');
  });

  it('reads the feed again on a verification once a failed first read is a second old', async () => {
    const { app, admin, clock, options } = await liveServer();
    const { access_token: token } = await signIn(app, admin);
    let refusals = 1;
    const flaky = Fastify();
    flaky.get('/auth/revocations', async (_request, reply) => {
      if (refusals-- > 0) return reply.code(503).send({ detail: 'Service temporarily unavailable' });
      return reply.send({ sids: [], cursor: 'cjAu', has_more: false });
    });
    cleanups.push(() => flaky.close());
    const feed = await flaky.listen({ host: '127.0.0.1', port: 0 });
    const verify = track(createAccessTokenVerifier({ ...options, revocationsUrl: `${feed}/auth/revocations`, revocationsInterval: 3_600_000 }));
    expect(await codeOf(verify(token))).toBe('ERR_REVOCATIONS_UNAVAILABLE');
    clock.advance(1);
    expect(await codeOf(verify(token))).toBe('accepted');
  });
});

describe('the verifier and the JWKS max-age', () => {
  it('refuses a token of a withdrawn key once the JWKS copy expires (the server says max-age=30)', async () => {
    const { app, admin, clock, services, options } = await liveServer();
    const { access_token: token } = await signIn(app, admin);
    const verify = track(createAccessTokenVerifier({ ...options, revocationsUrl: false }));
    expect(await codeOf(verify(token))).toBe('accepted');
    const [signing] = await services.keys.jwks().then((jwks) => jwks.keys);
    await revokeSigningKey(services, String(signing?.kid));
    clock.advance(31);
    expect(await codeOf(verify(token))).toBe('ERR_JWKS_NO_MATCHING_KEY');
  });

  it('follows a shorter max-age, and keeps no copy longer than 60 s whatever the header says', async () => {
    const short = await jwksServer('public, max-age=5');
    const clock = new TestClock(Date.now());
    const base = { issuer: 'https://auth.test', audience: 'school-admin', revocationsUrl: false as const, now: () => clock.now() };
    const verifyShort = track(createAccessTokenVerifier({ ...base, jwksUrl: short.jwksUrl }));
    expect(await codeOf(verifyShort(await short.sign(clock.now())))).toBe('accepted');
    clock.advance(4);
    await verifyShort(await short.sign(clock.now()));
    expect(short.fetches()).toBe(1);
    clock.advance(2);
    await verifyShort(await short.sign(clock.now()));
    expect(short.fetches()).toBe(2);

    const long = await jwksServer('public, max-age=3600');
    const verifyLong = track(createAccessTokenVerifier({ ...base, jwksUrl: long.jwksUrl, cacheMaxAge: 600_000 }));
    await verifyLong(await long.sign(clock.now()));
    clock.advance(59);
    await verifyLong(await long.sign(clock.now()));
    expect(long.fetches()).toBe(1);
    clock.advance(2);
    await verifyLong(await long.sign(clock.now()));
    expect(long.fetches()).toBe(2);
  });
});
