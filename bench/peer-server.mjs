// The best peer, for bench/peer-wrk.mjs: oidc-provider (a devDependency) answering its token
// endpoint's refresh_token grant, storage in memory (a Map: its default adapter keeps only the
// 1,000 entries last used, too few for a run of rotations), access tokens as
// ES256 JWTs for one resource (no ID token: no openid scope), a public client (no client
// authentication, as our refresh). ROTATION=on rotates the refresh token at each use. It makes
// TOKENS refresh tokens at start, writes them to TOKENS_FILE, one a line, and prints
// "listening <port>". A request without refresh_token is its 400 (invalid_request).
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import process from 'node:process';
import Provider from 'oidc-provider';

const RESOURCE = 'urn:school-auth';
const CLIENT = 'bench';
const jwk = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'peer-key', alg: 'ES256', use: 'sig' };
const store = new Map();
class MapAdapter {
  constructor(model) {
    this.model = model;
  }
  upsert(id, payload) {
    store.set(`${this.model}:${id}`, payload);
  }
  find(id) {
    return store.get(`${this.model}:${id}`);
  }
  consume(id) {
    store.get(`${this.model}:${id}`).consumed = Math.floor(Date.now() / 1000);
  }
  destroy(id) {
    store.delete(`${this.model}:${id}`);
  }
  revokeByGrantId() {}
  findByUid() {}
  findByUserCode() {}
}
const provider = new Provider('http://127.0.0.1', {
  adapter: MapAdapter,
  clients: [{ client_id: CLIENT, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://client.example/cb'], id_token_signed_response_alg: 'ES256' }],
  cookies: { keys: ['bench-cookie-key'] },
  ttl: { Grant: 86_400, RefreshToken: 86_400, AccessToken: 900 },
  jwks: { keys: [jwk] },
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  rotateRefreshToken: process.env.ROTATION === 'on',
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: 'api', audience: 'school-auth', accessTokenTTL: 900, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
    },
  },
});
provider.on('server_error', (ctx, error) => process.stderr.write(`peer: ${error.stack}\n`));

const client = await provider.Client.find(CLIENT);
const tokens = [];
for (let i = 0; i < Number(process.env.TOKENS ?? 200); i += 1) {
  const accountId = `admin-${i % 4}`;
  const grant = new provider.Grant({ accountId, clientId: CLIENT });
  grant.addResourceScope(RESOURCE, 'api');
  const grantId = await grant.save();
  const token = new provider.RefreshToken({ client, accountId, grantId, scope: 'api', resource: RESOURCE, gty: 'authorization_code', expiresWithSession: false });
  tokens.push(await token.save());
}
if (process.env.TOKENS_FILE) await writeFile(process.env.TOKENS_FILE, `${tokens.join('\n')}\n`);

const server = provider.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
server.keepAliveTimeout = 72_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
