import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { OPS_SCHOOL, OPS_USERNAME, REPO_ROOT, cleanupOps, seedWithCli, startServer } from '../../helpers/ops-server.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = join(REPO_ROOT, 'test-output', 'docs.png');
const PASSWORD = 'docs browser passphrase 7';
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const haveChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';
if (!haveChromium && !inCi) {
  console.warn(`\n*** ${CHROMIUM} is missing: the /docs browser test is SKIPPED (install Debian's chromium to run it; in CI it fails) ***\n`);
}

let browser: Browser | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await cleanupOps();
});

describe('GET /docs in a real browser', () => {
  it.skipIf(!haveChromium && !inCi)(
    'shows school-auth with its operations by tag, lists the contract endpoints and signs in through "Try it out", loading nothing from another host',
    async () => {
      if (!haveChromium) throw new Error(`${CHROMIUM} is missing; the docs browser test must run in CI (apt-get install chromium)`);
      const launching = chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      const server = await startServer().catch(async (error: unknown) => {
        await (await launching).close();
        throw error;
      });
      browser = await launching;
      await seedWithCli(server, PASSWORD);
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      // Everything the console says: a Content-Security-Policy violation is a broken part of the page.
      const console: string[] = [];
      page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => console.push(`pageerror: ${error.message}`));

      const landing = await page.goto(`${server.url}/docs`);
      expect(landing?.status()).toBe(200);
      await page.locator('.opblock').first().waitFor({ timeout: 20_000 });

      // Ours, not the framework's: our title and logo, the package's version, the operations by tag.
      expect(await page.title()).toBe('school-auth API');
      const logo = page.locator('#swagger-ui .topbar .topbar-wrapper a.link img');
      await logo.waitFor({ timeout: 10_000 });
      const logoSvg = Buffer.from((await logo.getAttribute('src'))!.replace(/^data:image\/svg\+xml;base64,/, ''), 'base64').toString('utf8');
      expect(logoSvg).toContain('school-auth');
      expect(logoSvg).not.toMatch(/fastify/i);
      expect((await page.locator('.info .title').innerText()).replace(/\s+/g, ' ')).toMatch(new RegExp(`^school-auth ${PACKAGE_VERSION.replace(/\./g, '\\.')}\\b`));
      const tags = (await page.locator('.opblock-tag-section .opblock-tag').allInnerTexts()).map((text) => text.split('\n')[0]?.trim());
      expect(tags).toEqual(['sign-in and tokens', 'sessions', 'second factor', 'keys', 'operations', 'directory provisioning (SCIM 2.0)']);
      expect(requested.some((url) => /\/docs\/(static\/)?(logo\.svg|favicon-\d+x\d+\.png)$/.test(url))).toBe(false);

      const summaries = (await page.locator('.opblock-summary').allInnerTexts()).map((text) => text.replace(/\s+/g, ' '));
      expect(summaries.some((text) => /\bPOST \/admin\/auth\/login\b/.test(text))).toBe(true);
      expect(summaries.some((text) => /\bPOST \/auth\/refresh\b/.test(text))).toBe(true);

      const login = page.locator('.opblock-post').filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/admin\/auth\/login$/ }) });
      await expect.poll(() => login.count()).toBe(1);
      await login.locator('.opblock-summary').click();

      // "Try it out" (the docs may also open with it already on, then only "Cancel" shows).
      const tryItOut = login.getByRole('button', { name: 'Try it out' });
      if (await tryItOut.isVisible()) await tryItOut.click();
      const execute = login.getByRole('button', { name: 'Execute' });
      await execute.waitFor({ timeout: 10_000 });

      const body = login.locator('textarea.body-param__text');
      await body.fill(JSON.stringify({ school_id: OPS_SCHOOL, username: OPS_USERNAME, password: PASSWORD }));
      await execute.click();

      const live = login.locator('.live-responses-table');
      const status = live.locator('tbody .response .response-col_status').first();
      await status.waitFor({ timeout: 20_000 });
      expect((await status.innerText()).trim()).toBe('200');
      const shown = await live.locator('.response-col_description pre').first().innerText();
      const answer = JSON.parse(shown) as { access_token: string; school_id: string; username: string; token_type: string };
      expect(answer.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(answer).toMatchObject({ school_id: OPS_SCHOOL, username: OPS_USERNAME, token_type: 'bearer' });

      // The token the page shows is a real one.
      const me = await fetch(`${server.url}/admin/auth/me`, { headers: { authorization: `Bearer ${answer.access_token}` } });
      expect(me.status).toBe(200);

      mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(existsSync(SCREENSHOT)).toBe(true);

      expect(console.filter((line) => /Content[- ]Security[- ]Policy|CSP/i.test(line))).toEqual([]);
      expect(console.filter((line) => line.startsWith('error:') || line.startsWith('pageerror:'))).toEqual([]);

      // The link to the document is the one the service serves (not Swagger UI's internal /docs/json).
      const link = page.locator('.info hgroup.main a').first();
      await link.waitFor({ timeout: 10_000 });
      expect((await link.innerText()).trim()).toBe('/openapi.json');
      expect(new URL((await link.getAttribute('href')) ?? '', server.url).href).toBe(`${server.url}/openapi.json`);

      // Swagger UI came from the service itself (no CDN), and so did everything else.
      expect(requested).toContain(`${server.url}/admin/auth/login`);
      expect(requested.some((url) => url.startsWith(`${server.url}/docs/`) && url.endsWith('.js'))).toBe(true);
      const foreign = requested.filter((url) => /^(https?|wss?):/.test(url) && new URL(url).hostname !== '127.0.0.1');
      expect(foreign).toEqual([]);
    },
    60_000,
  );
});
