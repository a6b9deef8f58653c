import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { changePassword, unlockAdmin } from '../../../src/auth/accounts/admins.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { enrollTotp, passwordStepFrom, postFrom, totpCode, verifyFrom, wrongCode } from '../../helpers/mfa.js';

const HOME = '198.51.100.10';
const OFFICE = '198.51.100.20';
const LOCKED = { detail: 'Second factor locked; an operator must reset it' };

type Seeded = Awaited<ReturnType<typeof seedAdmin>>;

async function codeFrom(t: TestApp, admin: Seeded, ip: string, code: string): Promise<LightMyRequestResponse> {
  return verifyFrom(t, await passwordStepFrom(t, admin, ip), code, ip);
}

/** The owner signs in from HOME and OFFICE (known addresses from then on), and enrolls TOTP. */
async function owner(t: TestApp) {
  const admin = await seedAdmin(t.services);
  const office = await postFrom(t, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }, OFFICE);
  expect(office.statusCode).toBe(200);
  const home = await postFrom(t, '/admin/auth/login', { school_id: admin.schoolId, username: admin.username, password: admin.password }, HOME);
  const { secret } = await enrollTotp(t, home.json<{ access_token: string }>().access_token);
  t.clock.advance(30);
  return { admin, secret };
}

/** `count` wrong codes, each from a new address (the password is known to the attacker). */
async function wrongCodesFromElsewhere(t: TestApp, admin: Seeded, secret: string, count: number, first = 0) {
  const statuses: number[] = [];
  for (let n = first; n < first + count; n++) statuses.push((await codeFrom(t, admin, `203.0.113.${n % 250}`, wrongCode(t, secret))).statusCode);
  return statuses;
}

describe.each(TEST_DIALECTS)('the second-factor throttle spares known addresses on %s', (dialect) => {
  const open = useTestApps(dialect);

  it("ten wrong codes from elsewhere throttle other addresses, never the owner's right code from a known one", async () => {
    const t = await open();
    const { admin, secret } = await owner(t);
    expect(await wrongCodesFromElsewhere(t, admin, secret, 10)).toEqual(new Array(10).fill(401));
    const elsewhere = await codeFrom(t, admin, '203.0.113.200', totpCode(t, secret));
    expect(elsewhere.statusCode).toBe(429);
    expect(Number(elsewhere.headers['retry-after'])).toBe(900);
    const home = await codeFrom(t, admin, HOME, totpCode(t, secret));
    expect(home.statusCode, home.body).toBe(200);
  });

  it('a hundred failures from elsewhere lock only addresses new to the admin; unlock lifts it and keeps the factor', async () => {
    const t = await open();
    const { admin, secret } = await owner(t);
    for (let round = 0; round < 10; round++) {
      expect(await wrongCodesFromElsewhere(t, admin, secret, 10, round * 10)).toEqual(new Array(10).fill(401));
      t.clock.advance(900);
    }
    expect((await codeFrom(t, admin, '192.0.2.55', totpCode(t, secret))).json()).toEqual(LOCKED);
    expect((await codeFrom(t, admin, OFFICE, totpCode(t, secret))).statusCode).toBe(200);

    t.clock.advance(30);
    await unlockAdmin(t.services, admin);
    expect((await codeFrom(t, admin, '192.0.2.55', totpCode(t, secret))).statusCode).toBe(200);
    expect(await t.services.db.selectFrom('mfa_factors').select('id').execute()).toHaveLength(1);
  });

  it('an attacker at a known address is still limited there, and only there', async () => {
    const t = await open();
    const { admin, secret } = await owner(t);
    for (let i = 0; i < 10; i++) expect((await codeFrom(t, admin, HOME, wrongCode(t, secret))).statusCode).toBe(401);
    expect((await codeFrom(t, admin, HOME, totpCode(t, secret))).statusCode).toBe(429);
    expect((await codeFrom(t, admin, OFFICE, totpCode(t, secret))).statusCode).toBe(200);
    t.clock.advance(900);
    t.clock.advance(30);
    expect((await codeFrom(t, admin, HOME, totpCode(t, secret))).statusCode).toBe(200);
  });

  it('admin passwd lifts the lock too', async () => {
    const t = await open();
    const { admin, secret } = await owner(t);
    for (let round = 0; round < 10; round++) {
      await wrongCodesFromElsewhere(t, admin, secret, 10, round * 10);
      t.clock.advance(900);
    }
    expect((await codeFrom(t, admin, '192.0.2.55', totpCode(t, secret))).json()).toEqual(LOCKED);
    const password = 'an entirely new passphrase 42';
    await changePassword(t.services, admin, password);
    t.clock.advance(30);
    expect((await codeFrom(t, { ...admin, password }, '192.0.2.55', totpCode(t, secret))).statusCode).toBe(200);
  });
});
