import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { addAdmin } from '../../../src/auth/accounts/admins.js';
import { addSchool } from '../../../src/auth/accounts/schools.js';
import { linkAdmin } from '../../../src/auth/sso/links.js';
import { setSso } from '../../../src/auth/sso/settings.js';
import { closeServices, openServices } from '../../../src/services.js';
import { PASSWORD, testConfig } from '../../helpers/app.js';
import { REPO_ROOT } from '../../helpers/cli-run.js';
import { createTestDatabase } from '../../helpers/database.js';
import { TestIdp } from '../../helpers/oidc-idp.js';
import { freePort } from '../../helpers/free-port.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';
if (!haveChromium && !inCi) {
  console.warn(`\n*** ${CHROMIUM} is missing: the single sign-on browser test is SKIPPED (install Debian's chromium to run it; in CI it fails) ***\n`);
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The front end: one page on http://localhost (a secure context, so crypto.subtle works) that starts and finishes the sign-in. */
async function serveFrontEnd(api: string): Promise<string> {
  const html = readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'sso-front-end.html'), 'utf8').replace('__API__', api);
  const server: Server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://localhost:${port}/`;
}

describe('single sign-on in a real browser', () => {
  it.skipIf(!haveChromium && !inCi)(
    'a front-end page starts, the IdP form is filled, the callback returns to the page, which exchanges the code and calls /admin/auth/me',
    async () => {
      if (!haveChromium) throw new Error(`${CHROMIUM} is missing; the single sign-on browser test must run in CI (apt-get install chromium)`);
      const apiPort = await freePort();
      const api = `http://127.0.0.1:${apiPort}`;
      const frontEnd = await serveFrontEnd(api);
      const idp = await TestIdp.start({
        clients: [{ client_id: 'school-auth', client_secret: 'browser-secret', redirect_uris: [`${api}/admin/auth/sso/callback`] }],
        users: { 'alice-sub': { email: 'alice@district.example', email_verified: true } },
      });
      cleanups.push(() => idp.close());

      const config = testConfig({ PUBLIC_URL: api, SSO_REDIRECT_URIS: frontEnd, SSO_ALLOW_HTTP_LOOPBACK: 'on', CORS_ORIGINS: frontEnd.replace(/\/$/, '') });
      const services = await openServices(config, { database: await createTestDatabase('sqlite') });
      cleanups.push(() => closeServices(services));
      const app = await buildApp(services);
      cleanups.push(() => app.close());
      await app.listen({ host: '127.0.0.1', port: apiPort });
      await addSchool(services, 'lincoln-high', undefined);
      await setSso(services, 'lincoln-high', { provider: 'oidc', issuer: idp.issuer, clientId: 'school-auth', clientSecret: 'browser-secret' });
      await addAdmin(services, { schoolId: 'lincoln-high', username: 'alice' }, PASSWORD);
      await linkAdmin(services, { schoolId: 'lincoln-high', username: 'alice' }, { email: 'alice@district.example' });

      const browser: Browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      cleanups.push(() => browser.close());
      const page = await browser.newPage();
      const visited: string[] = [];
      page.on('request', (request) => {
        if (request.isNavigationRequest()) visited.push(request.url());
      });

      await page.goto(frontEnd);
      // The page sent the browser to us, and we sent it to the IdP's login form.
      const login = page.locator('input[name="login"]');
      await login.waitFor({ timeout: 20_000 });
      expect(page.url().startsWith(idp.issuer)).toBe(true);
      await login.fill('alice-sub');
      await page.locator('input[name="password"]').fill('any password');
      await page.locator('button[type="submit"]').click();

      const result = page.locator('#result');
      await expect.poll(() => result.innerText(), { timeout: 20_000 }).toMatch(/^\{/);
      const shown = JSON.parse(await result.innerText()) as { exchange: number; me: number; who: { username: string; school_id: string; amr: string[] } };
      expect(shown).toMatchObject({ exchange: 200, me: 200, who: { username: 'alice', school_id: 'lincoln-high', amr: ['fed'] } });

      // The journey: front end -> our start -> the IdP -> our callback -> the front end with a code.
      expect(visited[0]).toBe(frontEnd);
      expect(visited.some((url) => url.startsWith(`${api}/admin/auth/sso/lincoln-high/start?`))).toBe(true);
      expect(visited.some((url) => url.startsWith(`${api}/admin/auth/sso/callback?`))).toBe(true);
      expect(visited.some((url) => url.startsWith(`${frontEnd}?code=`))).toBe(true);
      // The page took the code out of its address bar after the exchange.
      expect(page.url()).toBe(frontEnd);
    },
    90_000,
  );
});
