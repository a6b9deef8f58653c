import { existsSync } from 'node:fs';
import { decodeJwt } from 'jose';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { OPS_SCHOOL, OPS_USERNAME, cleanupOps, seedWithCli, startServer, type RunningServer } from '../../helpers/ops-server.js';
import { inPage, servePasskeyPage, type ApiAnswer, type PasskeyPage } from '../../helpers/passkey-page.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'passkey browser passphrase 9';
const LOGIN = { school_id: OPS_SCHOOL, username: OPS_USERNAME, password: PASSWORD };

const haveChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';
if (!haveChromium && !inCi) {
  console.warn(`\n*** ${CHROMIUM} is missing: the passkey browser test is SKIPPED (install Debian's chromium to run it; in CI it fails) ***\n`);
}

let browser: Browser | undefined;
let site: PasskeyPage | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await site?.close();
  site = undefined;
  await cleanupOps();
});

interface Scene {
  readonly server: RunningServer;
  /** The page's origin, http://localhost:<port>. */
  readonly origin: string;
  readonly page: Page;
  readonly cdp: CDPSession;
  readonly authenticatorId: string;
  /** Every URL the page requested. */
  readonly requested: string[];
}

/**
 * The page on http://localhost:<port>/ in Chromium with a CDP virtual authenticator (a device-bound
 * platform passkey with user verification), and the real server behind it with passkeys for that origin.
 */
async function openScene(): Promise<Scene> {
  if (!haveChromium) throw new Error(`${CHROMIUM} is missing; the passkey browser test must run in CI (apt-get install chromium)`);
  const launching = chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  site = await servePasskeyPage();
  const server = await startServer({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: site.origin }).catch(async (error: unknown) => {
    await (await launching).close();
    throw error;
  });
  site.forwardTo(server.url);
  browser = await launching;
  await seedWithCli(server, PASSWORD);
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  expect((await page.goto(site.url))?.status()).toBe(200);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const options = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;
  // No backup eligibility: the credential is device-bound (singleDevice), so the token says hwk.
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...options, defaultBackupEligibility: false, defaultBackupState: false } });
  return { server, origin: site.origin, page, cdp, authenticatorId, requested };
}

async function signCounts(scene: Scene): Promise<Map<string, number>> {
  const { credentials } = await scene.cdp.send('WebAuthn.getCredentials', { authenticatorId: scene.authenticatorId });
  return new Map(credentials.map((credential) => [Buffer.from(credential.credentialId, 'base64').toString('base64url'), credential.signCount]));
}

function expectPasskeyTokens(answer: ApiAnswer): string {
  expect(answer.body.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const claims = decodeJwt(answer.body.access_token as string);
  expect(claims.acr).toBe('aal2');
  expect(claims.amr).toEqual(expect.arrayContaining(['pwd', 'hwk', 'mfa']));
  expect(claims.amr).not.toContain('swk');
  return answer.body.access_token as string;
}

function expectOnlyLoopback(scene: Scene): void {
  const foreign = scene.requested.filter((url) => /^(https?|wss?):/.test(url) && !['localhost', '127.0.0.1'].includes(new URL(url).hostname));
  expect(foreign).toEqual([]);
  // The browser knew only the page: the API was reached through it, same-origin.
  expect(scene.requested).toContain(`${scene.origin}/admin/auth/mfa/webauthn`);
  expect(scene.requested.filter((url) => url.startsWith(scene.server.url))).toEqual([]);
}

describe('passkeys in a real browser (Chromium, CDP virtual authenticator)', () => {
  it.skipIf(!haveChromium && !inCi)(
    'enrolls a passkey with an aal1 token, then signs in with password + passkey to an aal2 token; a replayed assertion is refused',
    async () => {
      const scene = await openScene();
      const front = inPage(scene.page);

      const first = await front.call('POST', '/admin/auth/login', LOGIN);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(decodeJwt(first.body.access_token as string).acr).toBe('aal1');

      const enrolled = await front.enrollPasskey(first.body.access_token as string, 'Laptop');
      expect([enrolled.step, enrolled.status], JSON.stringify(enrolled.body)).toEqual(['enroll', 201]);
      expect(enrolled.options).toMatchObject({ rp: { id: 'localhost' }, attestation: 'none', authenticatorSelection: { userVerification: 'required' } });
      expect(enrolled.body.recovery_codes).toHaveLength(10);
      const credentialId = enrolled.credential?.id as string;
      const afterCreate = (await signCounts(scene)).get(credentialId);
      expect(afterCreate).toBeTypeOf('number');

      const second = await front.call('POST', '/admin/auth/login', LOGIN);
      expect(second.status, JSON.stringify(second.body)).toBe(403);
      expect(second.body).toMatchObject({ detail: 'Second factor required', mfa_methods: ['webauthn', 'recovery_code'] });

      const verified = await front.verifyWithPasskey(second.body.mfa_token as string);
      expect([verified.step, verified.status], JSON.stringify(verified.body)).toEqual(['verify', 200]);
      expect(verified.options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [expect.objectContaining({ id: credentialId })] });
      expect(verified.body).toMatchObject({ token_type: 'bearer', school_id: OPS_SCHOOL, username: OPS_USERNAME });
      const aal2 = expectPasskeyTokens(verified);
      expect((await front.call('GET', '/admin/auth/me', undefined, aal2)).status).toBe(200);
      expect((await signCounts(scene)).get(credentialId)).toBeGreaterThan(afterCreate!);

      // The same assertion again: its mfa_token is spent, and on a fresh challenge it does not verify.
      const again = { mfa_token: second.body.mfa_token, method: 'webauthn', credential: verified.credential };
      expect(await front.call('POST', '/admin/auth/mfa/verify', again)).toEqual({ status: 401, body: { detail: 'Invalid or expired mfa_token' } });
      const third = await front.call('POST', '/admin/auth/login', LOGIN);
      expect(third.status).toBe(403);
      expect((await front.call('POST', '/admin/auth/mfa/webauthn/options', { mfa_token: third.body.mfa_token })).status).toBe(200);
      const replayed = await front.call('POST', '/admin/auth/mfa/verify', { ...again, mfa_token: third.body.mfa_token });
      expect(replayed).toEqual({ status: 401, body: { detail: 'Invalid second factor' } });

      const factors = await front.call('GET', '/admin/auth/mfa', undefined, aal2);
      expect(factors.status).toBe(200);
      expect(factors.body.factors).toEqual([expect.objectContaining({ factor_id: enrolled.body.factor_id, type: 'webauthn', name: 'Laptop' })]);
      expectOnlyLoopback(scene);
    },
    60_000,
  );

  it.skipIf(!haveChromium && !inCi)(
    "in a school that requires a second factor, an admin with none enrolls a passkey with the login's mfa_token and is signed in at aal2",
    async () => {
      const scene = await openScene();
      const front = inPage(scene.page);
      const policy = await scene.server.cli(['school', 'mfa', OPS_SCHOOL, 'required']);
      expect(policy.code, policy.stderr).toBe(0);

      const login = await front.call('POST', '/admin/auth/login', LOGIN);
      expect(login.status, JSON.stringify(login.body)).toBe(403);
      expect(login.body).toMatchObject({ detail: 'Second factor enrollment required', mfa_methods: [] });

      const enrolled = await front.enrollPasskey(login.body.mfa_token as string);
      expect([enrolled.step, enrolled.status], JSON.stringify(enrolled.body)).toEqual(['enroll', 201]);
      expect(enrolled.body.recovery_codes).toHaveLength(10);
      const aal2 = expectPasskeyTokens(enrolled);
      expect((await front.call('GET', '/admin/auth/me', undefined, aal2)).status).toBe(200);

      const factors = await front.call('GET', '/admin/auth/mfa', undefined, aal2);
      expect(factors.body.factors).toEqual([expect.objectContaining({ type: 'webauthn', name: 'Passkey' })]);
      const next = await front.call('POST', '/admin/auth/login', LOGIN);
      expect(next.body).toMatchObject({ detail: 'Second factor required', mfa_methods: ['webauthn', 'recovery_code'] });
      expectOnlyLoopback(scene);
    },
    60_000,
  );
});
