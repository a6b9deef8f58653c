import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { addSchool } from '../../../src/auth/accounts/schools.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { closeServices, openServices } from '../../../src/services.js';
import { postJson, testConfig } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { createTestDatabase } from '../../helpers/database.js';
import { TestIdp } from '../../helpers/oidc-idp.js';
import { PUBLIC_URL, FRONT_END, SCHOOL, idpClient, linkedAdmin, reachCallback, useIdp, type SsoApp } from '../../helpers/sso.js';

const USERS = { 'alice-sub': { email: 'alice@district.example', email_verified: true } };

describe('logs of single sign-on', () => {
  let idp: TestIdp;
  beforeAll(async () => {
    idp = await TestIdp.start({ clients: [idpClient()], users: USERS });
  });
  afterAll(() => idp.close());

  it('never contain login codes, states, the IdP code, verifiers, ID tokens or the client secret, at any level', async () => {
    const lines: string[] = [];
    const logger = createLogger('trace', { write: (line: string) => void lines.push(line) });
    const config = testConfig({ PUBLIC_URL, SSO_REDIRECT_URIS: FRONT_END, SSO_ALLOW_HTTP_LOOPBACK: 'on', LOG_LEVEL: 'trace' });
    const clock = new TestClock(Date.now());
    const services = await openServices(config, { clock, logger, database: await createTestDatabase('sqlite') });
    const app = await buildApp(services);
    const world: SsoApp = { app, services, clock, config, close: () => Promise.resolve() };
    try {
      await addSchool(services, SCHOOL, undefined);
      await useIdp(world, idp);
      await linkedAdmin(world, { subject: 'alice-sub' });
      const secrets: string[] = ['school-auth-secret'];
      const remember = (callback: Awaited<ReturnType<typeof reachCallback>>) => {
        secrets.push(callback.verifier, callback.returned.searchParams.get('code') ?? '', callback.returned.searchParams.get('state') ?? '');
        const code = callback.location?.searchParams.get('code');
        if (code) secrets.push(code);
        return code;
      };
      const good = await reachCallback(world, 'alice-sub');
      const code = remember(good);
      expect((await postJson(app, '/admin/auth/sso/token', { code, code_verifier: good.verifier })).statusCode).toBe(200);
      // Refusals and failures log a warning each: with nothing secret in it either.
      await idp.setMode({ tamper: { claims: { aud: 'another' } } });
      remember(await reachCallback(world, 'alice-sub'));
      remember(await reachCallback(world, 'alice-sub', { beforeCallback: () => idp.setMode({ mode: 'error500' }) }));
      await idp.setMode({ mode: 'normal' });
      expect((await postJson(app, '/admin/auth/sso/token', { code, code_verifier: good.verifier })).statusCode).toBe(401);

      const text = lines.join('');
      expect(text).toContain('sso: callback refused');
      for (const secret of secrets.filter((value) => value.length > 0)) expect(text, secret).not.toContain(secret);
      // No JWT (ID token or access token) in any line.
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    } finally {
      await idp.setMode({ mode: 'normal' });
      await app.close();
      await closeServices(services);
    }
  });
});
