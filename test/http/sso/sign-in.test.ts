import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { postJson } from '../../helpers/app.js';
import { useKeyFiles } from '../../helpers/key-files.js';
import { buildManagementApp } from '../../../src/http/management-app.js';
import { parseExposition, valueOf } from '../../helpers/ops-prometheus.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { pkcePair, signInAtIdp } from '../../helpers/oidc-idp.js';
import { FRONT_END, idpClient, linkedAdmin, reachCallback, signInThroughIdp, startUrl, useIdp, idpSuite } from '../../helpers/sso.js';

const USERS = {
  'alice-sub': { email: 'alice@district.example', email_verified: true },
  'mallory-sub': { email: 'mallory@district.example', email_verified: true },
};

const newKeyFile = useKeyFiles();

describe.each(TEST_DIALECTS)('sign-in through the IdP (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS });

  async function setUp() {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
  }

  it('signs a linked admin in: code, exchange, tokens with amr fed, /me', async () => {
    await setUp();
    const answer = await signInThroughIdp(suite.world, 'alice-sub');
    expect(answer.statusCode).toBe(200);
    const body = answer.json<{ access_token: string; refresh_token: string; username: string }>();
    expect(body.username).toBe('alice');
    const claims = decodeJwt(body.access_token);
    expect(claims.amr).toEqual(['fed']);
    expect(claims.acr).toBe('aal1');
    const me = await suite.world.app.inject({ method: 'GET', url: '/admin/auth/me', headers: { authorization: `Bearer ${body.access_token}` } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ username: 'alice', amr: ['fed'] });
    const own = await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sessions', headers: { authorization: `Bearer ${body.access_token}` } });
    expect(own.json<{ sessions: { amr: string[] }[] }>().sessions.map((session) => session.amr)).toEqual([['fed']]);
    const refreshed = await postJson(suite.world.app, '/auth/refresh', { refresh_token: body.refresh_token });
    expect(decodeJwt(refreshed.json<{ access_token: string }>().access_token).amr).toEqual(['fed']);
  });

  it('signs in with a client secret sealed under KEY_ENCRYPTION_KEY_FILE, and states sealed with a key derived from it', async () => {
    await suite.open(dialect, { KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { email: 'alice@district.example' });
    const stored = await suite.world.services.db.selectFrom('sso_settings').select('client_secret').executeTakeFirstOrThrow();
    expect(stored.client_secret).toMatch(/^enc:v1:/);
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(200);
    // With a key file, no state key is stored in the database.
    expect(await suite.world.services.db.selectFrom('server_secrets').selectAll().execute()).toEqual([]);
  });

  it('binds (iss, sub) at the first sign-in and matches only that afterwards', async () => {
    await setUp();
    expect((await signInThroughIdp(suite.world, 'alice-sub')).statusCode).toBe(200);
    const link = await suite.world.services.db.selectFrom('sso_links').selectAll().executeTakeFirstOrThrow();
    expect(link).toMatchObject({ issuer: suite.idp.issuer, subject: 'alice-sub', email: null });
    const events = await suite.world.services.db.selectFrom('events').select('type').where('type', 'like', 'sso.%').execute();
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['sso.linked', 'sso.success']));
  });

  it('redirects to the front end with a code only: no token in any URL', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub');
    expect(callback.response.statusCode).toBe(302);
    expect(callback.response.headers['cache-control']).toBe('no-store');
    expect(`${callback.location!.origin}${callback.location!.pathname}`).toBe(FRONT_END);
    expect([...callback.location!.searchParams.keys()]).toEqual(['code']);
    expect(callback.location!.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a login code works once, within 60 s, and only with the verifier of its challenge', async () => {
    await setUp();
    const first = await reachCallback(suite.world, 'alice-sub');
    const code = first.location!.searchParams.get('code')!;
    const wrongVerifier = await postJson(suite.world.app, '/admin/auth/sso/token', { code, code_verifier: pkcePair().verifier });
    expect(wrongVerifier.statusCode).toBe(401);
    expect(wrongVerifier.json()).toEqual({ detail: 'Invalid or expired sign-in code' });
    // A wrong verifier spent it: the right one no longer works either.
    expect((await postJson(suite.world.app, '/admin/auth/sso/token', { code, code_verifier: first.verifier })).statusCode).toBe(401);

    const second = await reachCallback(suite.world, 'alice-sub');
    const again = { code: second.location!.searchParams.get('code')!, code_verifier: second.verifier };
    expect((await postJson(suite.world.app, '/admin/auth/sso/token', again)).statusCode).toBe(200);
    expect((await postJson(suite.world.app, '/admin/auth/sso/token', again)).statusCode).toBe(401);

    const third = await reachCallback(suite.world, 'alice-sub');
    suite.world.clock.advance(61);
    const late = await postJson(suite.world.app, '/admin/auth/sso/token', { code: third.location!.searchParams.get('code')!, code_verifier: third.verifier });
    expect(late.statusCode).toBe(401);
  });

  it('of two exchanges of one code at once, exactly one gets a session', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub');
    const body = { code: callback.location!.searchParams.get('code')!, code_verifier: callback.verifier };
    const answers = await Promise.all([1, 2, 3].map(() => postJson(suite.world.app, '/admin/auth/sso/token', body)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401, 401]);
    expect(await suite.world.services.db.selectFrom('sessions').select('id').execute()).toHaveLength(1);
  });

  it('counts callbacks by outcome', async () => {
    await setUp();
    await signInThroughIdp(suite.world, 'alice-sub');
    await reachCallback(suite.world, 'mallory-sub');
    await suite.world.app.inject({ method: 'GET', url: '/admin/auth/sso/callback?state=forged' });
    const management = await buildManagementApp(suite.world.services, suite.world.app);
    const exposition = parseExposition((await management.inject({ method: 'GET', url: '/metrics' })).body);
    await management.close();
    for (const outcome of ['success', 'refused', 'invalid_state']) expect(valueOf(exposition, 'school_auth_sso_callbacks_total', { outcome }), outcome).toBe(1);
    expect(valueOf(exposition, 'school_auth_sso_exchanges_total', { outcome: 'success' })).toBe(1);
  });

  it('uses a state once, and refuses an altered one', async () => {
    await setUp();
    const { challenge } = pkcePair();
    const start = await suite.world.app.inject({ method: 'GET', url: startUrl(challenge) });
    const returned = await signInAtIdp(String(start.headers.location), 'alice-sub');
    const url = `${returned.pathname}${returned.search}`;
    expect((await suite.world.app.inject({ method: 'GET', url })).statusCode).toBe(302);
    const replay = await suite.world.app.inject({ method: 'GET', url });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual({ detail: 'This sign-in has expired or was already used: start again' });

    const state = new URL(String(start.headers.location)).searchParams.get('state')!;
    const altered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await suite.world.app.inject({ method: 'GET', url: `/admin/auth/sso/callback?code=x&state=${altered}` });
    expect(forged.statusCode).toBe(400);
  });

  it('refuses a state older than 10 minutes', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub', { beforeCallback: () => suite.world.clock.advance(601) });
    expect(callback.response.statusCode).toBe(400);
  });

  it('sends our own PKCE S256, state and nonce to the IdP, and writes nothing at start', async () => {
    await setUp();
    const count = async () => {
      const tables = ['sso_used_states', 'sso_login_codes', 'events', 'sessions', 'server_secrets'] as const;
      return Promise.all(tables.map(async (table) => (await suite.world.services.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));
    };
    const before = await count();
    const { challenge } = pkcePair();
    const start = await suite.world.app.inject({ method: 'GET', url: startUrl(challenge) });
    expect(start.statusCode).toBe(302);
    const location = new URL(String(start.headers.location));
    expect(location.origin).toBe(suite.idp.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    // Our challenge to the IdP is our own, not the front end's.
    expect(location.searchParams.get('code_challenge')).not.toBe(challenge);
    expect(location.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('redirect_uri')).toBe('http://127.0.0.1:8000/admin/auth/sso/callback');
    expect(await count()).toEqual(before);
  });
});
