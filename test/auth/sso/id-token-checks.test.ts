import { describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { type IdpMode } from '../../helpers/oidc-idp.js';
import { idpClient, linkedAdmin, reachCallback, useIdp, idpSuite } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };
const now = () => Math.floor(Date.now() / 1000);

/**
 * Each check of the ID token, against a real IdP told to send one thing wrong: re-signed with its
 * own key (or as `alg: none`, or with an HMAC keyed by the client secret).
 */
const TAMPERED: [string, IdpMode['tamper']][] = [
  ['another audience', { claims: { aud: 'another-client' } }],
  ['several audiences, azp another client', { claims: { aud: ['school-auth', 'another-client'], azp: 'another-client' } }],
  ['one audience, azp another client', { claims: { azp: 'another-client' } }],
  ['another issuer', { claims: { iss: 'https://evil.example' } }],
  ['another nonce', { claims: { nonce: 'not-the-one-we-sent' } }],
  ['no nonce', { dropClaims: ['nonce'] }],
  ['iat too far in the past', { claims: { iat: now() - 7200, exp: now() + 3600 } }],
  ['iat in the future', { claims: { iat: now() + 600, exp: now() + 3600 } }],
  ['alg none', { alg: 'none' }],
  ['HMAC keyed with the client secret', { alg: 'HS256' }],
  ['a signature by a key the IdP never published, under its kid', { key: 'foreign' }],
  ['a signature by a key the IdP never published, under an unknown kid', { key: 'unknown-kid' }],
];

describe.each(TEST_DIALECTS)('ID token checks (%s)', (dialect) => {
  const suite = idpSuite({ clients: [idpClient()], users: USERS, idTokenTtl: 60 });

  async function setUp() {
    await suite.open(dialect);
    await useIdp(suite.world, suite.idp);
    await linkedAdmin(suite.world, { subject: 'alice-sub' });
  }

  async function failureReasons(): Promise<string[]> {
    const rows = await suite.world.services.db.selectFrom('events').select('detail').where('type', '=', 'sso.failure').execute();
    return rows.map((row) => row.detail ?? '');
  }

  it('accepts a token re-signed with the IdP key and nothing changed (the tampering itself breaks nothing)', async () => {
    await setUp();
    await suite.idp.setMode({ tamper: {} });
    const callback = await reachCallback(suite.world, 'alice-sub');
    expect(callback.location?.searchParams.get('code')).toBeTruthy();
  });

  it.each(TAMPERED)('refuses an ID token with %s', async (_name, tamper) => {
    await setUp();
    await suite.idp.setMode({ tamper });
    const callback = await reachCallback(suite.world, 'alice-sub');
    expect(callback.response.statusCode).toBe(302);
    expect(callback.location?.searchParams.get('error')).toBe('access_denied');
    expect(callback.location?.searchParams.get('code')).toBeNull();
    expect(await failureReasons()).toEqual([expect.stringMatching(/^(id_token_rejected|azp|iat)/)]);
  });

  it('refuses an expired ID token (injected clock past its exp)', async () => {
    await setUp();
    const callback = await reachCallback(suite.world, 'alice-sub', { beforeCallback: () => suite.world.clock.advance(120) });
    expect(callback.location?.searchParams.get('error')).toBe('access_denied');
    expect(await failureReasons()).toEqual([expect.stringMatching(/^id_token_rejected/)]);
  });
});
