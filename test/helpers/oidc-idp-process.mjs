// A real OpenID Provider (panva's oidc-provider) for the single sign-on tests, run as a child
// process on loopback. Its setup comes as JSON in argv[2]: { clients, users, idTokenTtl }.
// It prints `listening <port>` once it answers. POST /__test/mode switches how it misbehaves,
// for the tests of each check: { mode: 'normal' | 'hang' | 'error500' | 'wrong-issuer' |
// 'huge-discovery' | 'huge-discovery-chunked' | 'huge-jwks' | 'huge-token' | 'huge-userinfo' |
// 'userinfo-other-sub' },
// { tamper: { claims?: {...}, alg?: 'none' | 'HS256', dropClaims?: [...], key?: 'foreign' | 'unknown-kid' } }.
// With `userinfoClaims: true` in the setup it behaves as OpenID Connect Core §5.4 allows and
// oidc-provider does by default: the claims of the `email` and `profile` scopes come only from
// its UserInfo endpoint, never in the ID token.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import process from 'node:process';
import { TextEncoder } from 'node:util';
import { generateKeyPairSync } from 'node:crypto';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const setup = JSON.parse(process.argv[2] ?? '{}');
const port = Number(setup.port ?? 0);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: setup.kid ?? 'idp-key-1', alg: 'RS256', use: 'sig' };
// A key the IdP never published, for ID tokens it did not sign.
const { privateKey: foreignKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
// More bytes than any IdP document or token answer should be (2 MiB).
const PADDING = 'x'.repeat(2 * 1024 * 1024);

let mode = 'normal';
let tamper;

function startProvider(issuer) {
  const users = setup.users ?? {};
  const provider = new Provider(issuer, {
    clients: setup.clients ?? [],
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key-not-secret'] },
    claims: { openid: ['sub', 'hd', 'tid', 'district'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: setup.userinfoClaims === true,
    pkce: { required: () => true, methods: ['S256'] },
    features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: true } },
    enabledJWA: { idTokenSigningAlgValues: ['RS256', 'HS256'] },
    ttl: { IdToken: setup.idTokenTtl ?? 3600, Interaction: 3600, Session: 3600, Grant: 3600, AuthorizationCode: 600 },
    loadExistingGrant: async (ctx) => {
      // Consent is not what these tests are about: every requested scope is granted.
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    findAccount: (_ctx, id) => {
      const claims = users[id];
      if (claims === undefined) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...claims }) };
    },
  });
  provider.proxy = false;
  return provider;
}

function retokenize(idToken, clientSecret) {
  const claims = { ...jose.decodeJwt(idToken), ...(tamper.claims ?? {}) };
  for (const name of tamper.dropClaims ?? []) delete claims[name];
  if (tamper.alg === 'none') {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
  }
  if (tamper.alg === 'HS256') return new jose.SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(clientSecret));
  if (tamper.key === 'foreign') return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid }).sign(foreignKey);
  if (tamper.key === 'unknown-kid') return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'never-published' }).sign(foreignKey);
  return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid }).sign(privateKey);
}

const HUGE_PATHS = { 'huge-discovery': '/.well-known/openid-configuration', 'huge-jwks': '/jwks', 'huge-token': '/token', 'huge-userinfo': '/me' };

/** Pads the answer of the path the mode names, as a JSON member (sent with a Content-Length) or streamed without one. */
function padAnswer(ctx) {
  if (mode === 'huge-discovery-chunked' && ctx.path === HUGE_PATHS['huge-discovery']) {
    const text = JSON.stringify({ ...ctx.body, padding: PADDING });
    ctx.body = Readable.from((function* () {
      for (let at = 0; at < text.length; at += 65536) yield text.slice(at, at + 65536);
    })());
    ctx.type = 'application/json';
    return;
  }
  if (HUGE_PATHS[mode] === ctx.path && ctx.status === 200) ctx.body = { ...ctx.body, padding: PADDING };
}

const server = createServer();
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  const issuer = `http://127.0.0.1:${address.port}`;
  const provider = startProvider(issuer);
  provider.use(async (ctx, next) => {
    if (ctx.path === '/__test/mode' && ctx.method === 'POST') {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      mode = body.mode ?? 'normal';
      tamper = body.tamper;
      ctx.status = 204;
      return;
    }
    if (ctx.path === '/__test/logout-token' && ctx.method === 'POST') {
      // What the IdP would POST to a client's backchannel_logout_uri: signed here on request, so a
      // test can deliver it to an in-process app.
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: issuer, iat: now, exp: now + 120, jti: String(Math.random()), events: { 'http://schemas.openid.net/event/backchannel-logout': {} }, ...body.claims };
      // A claim given as null is left out of the token.
      for (const [name, value] of Object.entries(claims)) if (value === null) delete claims[name];
      tamper = { alg: body.alg };
      ctx.body = { logout_token: await retokenize(`x.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.x`, body.secret ?? '') };
      tamper = undefined;
      return;
    }
    if (mode === 'hang') return new Promise(() => undefined);
    if (mode === 'error500') {
      ctx.status = 500;
      ctx.body = { error: 'server_error' };
      return;
    }
    await next();
    padAnswer(ctx);
    if (mode === 'userinfo-other-sub' && ctx.path === HUGE_PATHS['huge-userinfo'] && ctx.status === 200) ctx.body = { ...ctx.body, sub: 'someone-else' };
    if (mode === 'wrong-issuer' && ctx.path === '/.well-known/openid-configuration') ctx.body = { ...ctx.body, issuer: 'https://evil.example' };
    if (tamper !== undefined && ctx.path === '/token' && ctx.status === 200 && ctx.body?.id_token) {
      const client = (setup.clients ?? []).find((candidate) => candidate.client_id === ctx.oidc?.client?.clientId);
      ctx.body = { ...ctx.body, id_token: await retokenize(ctx.body.id_token, client?.client_secret ?? '') };
    }
  });
  server.on('request', provider.callback());
  process.stdout.write(`listening ${address.port}\n`);
});
