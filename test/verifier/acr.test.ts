import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createAccessTokenVerifier, requireAccessToken, type AccessTokenVerifier } from '../../src/verifier/index.js';
import { seedAdmin, useTestApps } from '../helpers/app.js';
import { adminWithTotp, passwordStep, totpCode, verify } from '../helpers/mfa.js';

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  throw new Error('the token was accepted');
}

describe('the verifier library and assurance levels', () => {
  const open = useTestApps('sqlite');

  it("requireAcr: 'aal2' refuses password-only tokens, and its Fastify hook answers the RFC 9470 step-up challenge", async () => {
    const t = await open();
    // The verifier checks expiry against the real time: bring the test clock to it.
    t.clock.advance(Math.floor((Date.now() - t.clock.now()) / 1000));
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const admin = await seedAdmin(t.services);
    const { secret, aal1 } = await adminWithTotp(t, admin);
    const aal2 = (await verify(t, await passwordStep(t, admin), totpCode(t, secret))).json<{ access_token: string }>().access_token;

    const options = { issuer: t.config.issuer, audience: t.config.audience, jwksUrl: `${address}/.well-known/jwks.json`, revocationsUrl: false as const };
    const verifiers: AccessTokenVerifier[] = [createAccessTokenVerifier(options), createAccessTokenVerifier({ ...options, requireAcr: 'aal2' })];
    try {
      const [any, strict] = verifiers as [AccessTokenVerifier, AccessTokenVerifier];
      expect((await any(aal1.access_token)).acr).toBe('aal1');
      expect(await refusal(strict(aal1.access_token))).toBe('ERR_INSUFFICIENT_USER_AUTHENTICATION');
      expect(await strict(aal2)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });

      const service = Fastify();
      service.get('/grades', { preHandler: requireAccessToken(strict) }, (request) => Promise.resolve({ sub: request.accessToken?.sub }));
      const low = await service.inject({ method: 'GET', url: '/grades', headers: { authorization: `Bearer ${aal1.access_token}` } });
      expect(low.statusCode).toBe(401);
      expect(low.headers['www-authenticate']).toBe(
        'Bearer error="insufficient_user_authentication", error_description="A second factor is required", acr_values="aal2"',
      );
      const high = await service.inject({ method: 'GET', url: '/grades', headers: { authorization: `Bearer ${aal2}` } });
      expect(high.statusCode).toBe(200);
      await service.close();
    } finally {
      for (const verifier of verifiers) verifier.close();
    }
  });
});
