import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccessTokenVerifier, requireAccessToken, type AccessTokenVerifier } from '../../src/verifier/index.js';
import { OPS_SCHOOL, OPS_USERNAME, cleanupOps, loginHttp, seedWithCli, sleep, startServer, type RunningServer } from '../helpers/ops-server.js';

const PASSWORD = 'verifier test passphrase 8';
const AUDIENCE = 'school-admin';

let server: RunningServer;
let issuer: string;
let jwksUrl: string;

beforeAll(async () => {
  // A new key is published 2 s before it signs; the server re-reads its keys every second.
  server = await startServer({ KEY_ACTIVATION_DELAY: '2', KEY_CACHE_SECONDS: '1', ACCESS_TOKEN_TTL: '300' });
  await seedWithCli(server, PASSWORD);
  issuer = `http://127.0.0.1:${server.port}`;
  jwksUrl = `${server.url}/.well-known/jwks.json`;
}, 60_000);

afterAll(cleanupOps);

// The refetch cooldown must be shorter than KEY_ACTIVATION_DELAY (2 s here, 60 s by default
// against jose's 30 s cooldown), or a verifier may meet a new key's token before it may refetch.
function newVerifier(overrides: { issuer?: string; audience?: string } = {}): AccessTokenVerifier {
  return createAccessTokenVerifier({ issuer, audience: AUDIENCE, jwksUrl, cooldownDuration: 1000, ...overrides });
}

async function accessToken(): Promise<string> {
  const response = await loginHttp(server, PASSWORD);
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The jose error code a refusal carries (ERR_JWT_EXPIRED, ERR_JWS_SIGNATURE_VERIFICATION_FAILED, ...). */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : `no code: ${String(error)}`;
  }
  throw new Error('the token was accepted');
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The service's active private key, read from its SQLite file (to forge tokens only it could sign). */
async function activeServiceKey(): Promise<{ kid: string; alg: string; key: Awaited<ReturnType<typeof importJWK>> }> {
  const sqlite = new SQLite(join(server.dataDir, 'school-auth.sqlite'), { readonly: true });
  try {
    const row = sqlite.prepare('select kid, alg, private_jwk from signing_keys order by active_from desc limit 1').get() as { kid: string; alg: string; private_jwk: string };
    return { kid: row.kid, alg: row.alg, key: await importJWK(JSON.parse(row.private_jwk) as JWK, row.alg) };
  } finally {
    sqlite.close();
  }
}

describe('createAccessTokenVerifier against the real server', () => {
  it('verifies a token from login and yields school_id, username and sid', async () => {
    const token = await accessToken();
    const claims = await newVerifier()(token);
    expect(claims).toMatchObject({ school_id: OPS_SCHOOL, username: OPS_USERNAME, iss: issuer, aud: AUDIENCE });
    expect(claims.sid).toMatch(/\S{8,}/);
    expect(claims.sub).toMatch(/\S{8,}/);
    expect(claims.exp - claims.iat!).toBe(300);
  });

  it('refuses a tampered token with a jose error', async () => {
    const verify = newVerifier();
    const token = await accessToken();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = decodeJwt(token);
    const changed = `${header}.${b64({ ...claims, username: 'mallory' })}.${signature}`;
    expect(await refusal(verify(changed))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(await refusal(verify(flipped))).toMatch(/^ERR_JW/);
    const unsigned = `${b64({ ...decodeProtectedHeader(token), alg: 'none' })}.${payload}.`;
    expect(await refusal(verify(unsigned))).toMatch(/^ERR_J/);
  });

  it('refuses an expired token with ERR_JWT_EXPIRED', async () => {
    const verify = newVerifier();
    const token = await accessToken();
    await verify(token); // JWKS fetched with the real clock
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 301_000 + 60_000);
      expect(await refusal(verify(token))).toBe('ERR_JWT_EXPIRED');
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a token meant for another audience or from another issuer', async () => {
    const token = await accessToken();
    expect(await refusal(newVerifier({ audience: 'another-service' })(token))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    expect(await refusal(newVerifier({ issuer: 'https://elsewhere.example.org' })(token))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
  });

  it('refuses a token of a key it does not know, and one of the right key with the wrong typ', async () => {
    const verify = newVerifier();
    const { privateKey } = await generateKeyPair('ES256');
    const claims = decodeJwt(await accessToken());
    const stranger = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'not-a-published-kid' }).sign(privateKey);
    expect(await refusal(verify(stranger))).toBe('ERR_JWKS_NO_MATCHING_KEY');

    const service = await activeServiceKey();
    const plainJwt = await new SignJWT(claims).setProtectedHeader({ alg: service.alg, typ: 'JWT', kid: service.kid }).sign(service.key);
    expect(await refusal(verify(plainJwt))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    // The control: the same forgery with the right typ is accepted, so the refusal above was about typ.
    const proper = await new SignJWT(claims).setProtectedHeader({ alg: service.alg, typ: 'at+jwt', kid: service.kid }).sign(service.key);
    await expect(verify(proper)).resolves.toMatchObject({ username: OPS_USERNAME });
  });
});

describe('createAccessTokenVerifier and the token lifetime', () => {
  it('refuses a token signed with the real key whose exp - iat exceeds maxTokenAge (900 s unless set)', async () => {
    const service = await activeServiceKey();
    const claims = decodeJwt(await accessToken());
    const iat = Math.floor(Date.now() / 1000);
    const forge = (lifetime: number) =>
      new SignJWT({ ...claims, iat, exp: iat + lifetime }).setProtectedHeader({ alg: service.alg, typ: 'at+jwt', kid: service.kid }).sign(service.key);

    expect(await refusal(newVerifier()(await forge(10 * 365 * 86_400)))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    expect(await refusal(newVerifier()(await forge(901)))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    await expect(newVerifier()(await forge(900))).resolves.toMatchObject({ username: OPS_USERNAME });

    const strict = createAccessTokenVerifier({ issuer, audience: AUDIENCE, jwksUrl, cooldownDuration: 1000, maxTokenAge: 300 });
    expect(await refusal(strict(await forge(301)))).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    await expect(strict(await forge(300))).resolves.toMatchObject({ username: OPS_USERNAME });
  });
});

describe('requireAccessToken in a Fastify app of another service', () => {
  async function protectedApp() {
    const app = Fastify();
    let handled = 0;
    app.addHook('preHandler', requireAccessToken(newVerifier()));
    app.get('/reports', (request) => {
      handled += 1;
      return request.accessToken;
    });
    await app.ready();
    return { app, handled: () => handled };
  }

  it('answers 200 with the claims for a good token', async () => {
    const { app, handled } = await protectedApp();
    const token = await accessToken();
    const response = await app.inject({ method: 'GET', url: '/reports', headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ school_id: OPS_SCHOOL, username: OPS_USERNAME, sid: decodeJwt(token).sid });
    expect(handled()).toBe(1);
    await app.close();
  });

  it('answers 401 {"detail":"Could not validate credentials"} with WWW-Authenticate: Bearer otherwise, without running the handler', async () => {
    const { app, handled } = await protectedApp();
    const token = await accessToken();
    const [header, body, signature] = token.split('.') as [string, string, string];
    // A character inside the signature, not the last: the last one's low bits are base64url
    // padding, which decoders ignore, so changing it can leave the signature bytes as they were.
    const badSignature = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    expect(Buffer.from(badSignature, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(false);
    const cases: Record<string, Record<string, string>> = {
      'no header': {},
      'empty bearer': { authorization: 'Bearer ' },
      'basic scheme': { authorization: `Basic ${Buffer.from('alice:pw').toString('base64')}` },
      'token without scheme': { authorization: token },
      'tampered token': { authorization: `Bearer ${header}.${body}.${badSignature}` },
      garbage: { authorization: 'Bearer not.a.jwt' },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const response = await app.inject({ method: 'GET', url: '/reports', headers });
      expect(response.statusCode, name).toBe(401);
      expect(response.body, name).toBe('{"detail":"Could not validate credentials"}');
      expect(response.headers['www-authenticate'], name).toBe('Bearer');
      expect(response.headers['content-type'], name).toMatch(/^application\/json/);
    }
    expect(handled()).toBe(0);
    await app.close();
  });
});

/** `keys rotate` once, then the first token signed with the new key (polling login, at most ~10 s). */
let rotation:
  | Promise<{ oldToken: string; newToken: string; oldKid: string; verifierFromBefore: AccessTokenVerifier; verifierFromAfter: AccessTokenVerifier; oldVerifiedBefore: unknown }>
  | undefined;

function rotate() {
  rotation ??= (async () => {
    const oldToken = await accessToken();
    const oldKid = decodeProtectedHeader(oldToken).kid!;
    // This verifier has the JWKS of before the rotation in its cache.
    const verifierFromBefore = newVerifier();
    const oldVerifiedBefore = await verifierFromBefore(oldToken);

    const rotated = await server.cli(['keys', 'rotate']);
    if (rotated.code !== 0) throw new Error(`keys rotate failed: ${rotated.stderr}`);
    // The new key is published before it signs: wait until the JWKS shows it, then fetch it.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const jwks = (await (await fetch(jwksUrl)).json()) as { keys: Array<{ kid: string }> };
      if (jwks.keys.length >= 2) break;
      if (Date.now() > deadline) throw new Error(`the new key was not published within 10 s: ${JSON.stringify(jwks)}`);
      await sleep(200);
    }
    const verifierFromAfter = newVerifier();
    await verifierFromAfter(oldToken);

    for (;;) {
      const token = await accessToken();
      if (decodeProtectedHeader(token).kid !== oldKid) return { oldToken, newToken: token, oldKid, verifierFromBefore, verifierFromAfter, oldVerifiedBefore };
      if (Date.now() > deadline) throw new Error('no token was signed with the new key within 10 s of `keys rotate`');
      await sleep(250);
    }
  })();
  return rotation;
}

describe('key rotation with `school-auth keys rotate`', () => {
  it('keeps verifying a token of the old key after the rotation', async () => {
    const { oldToken, newToken, oldKid, verifierFromBefore, oldVerifiedBefore } = await rotate();
    expect(oldVerifiedBefore).toMatchObject({ username: OPS_USERNAME });
    expect(decodeProtectedHeader(newToken).kid).not.toBe(oldKid);
    await expect(verifierFromBefore(oldToken)).resolves.toMatchObject({ username: OPS_USERNAME });
    await expect(newVerifier()(oldToken)).resolves.toMatchObject({ username: OPS_USERNAME });
  }, 30_000);

  it('verifies a token of the new key with a verifier that fetched the JWKS after the new key was published', async () => {
    const { newToken, verifierFromAfter } = await rotate();
    await expect(verifierFromAfter(newToken)).resolves.toMatchObject({ username: OPS_USERNAME, school_id: OPS_SCHOOL });
  }, 30_000);

  it('verifies a token of the new key with the SAME verifier instance that cached the old JWKS (refetch on unknown kid)', async () => {
    const { newToken, verifierFromBefore } = await rotate();
    const claims = await verifierFromBefore(newToken).catch((error: unknown) => {
      throw new Error(`the verifier that knew only the old key refused the new key's token: ${(error as { code?: string }).code ?? String(error)}`);
    });
    expect(claims).toMatchObject({ username: OPS_USERNAME, school_id: OPS_SCHOOL });
  }, 30_000);
});
