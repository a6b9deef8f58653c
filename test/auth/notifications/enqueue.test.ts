import { describe, expect, it } from 'vitest';
import { changePassword, setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { CLI_CONTEXT, recordEvent } from '../../../src/auth/events.js';
import { revokeSigningKey } from '../../../src/auth/keys/key-revocation.js';
import { resetAdminMfa } from '../../../src/auth/mfa/operator.js';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { PASSWORD, seedAdmin, signIn, useTestApps, type TestApp } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, bearer, passwordStep, verify } from '../../helpers/mfa.js';
import { postJson } from '../../helpers/app.js';

const HOOK_ENV = { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' };

/** The outbox as (type, channel) pairs, oldest first. */
async function outbox(t: TestApp): Promise<string[]> {
  const rows = await t.services.db.selectFrom('outbox').select(['type', 'channel', 'created_at', 'id']).orderBy('created_at').orderBy('type').execute();
  return rows.map((row) => `${row.type} ${row.channel}`);
}

describe.each(TEST_DIALECTS)('notifications are written with the change they report (%s)', (dialect) => {
  const open = useTestApps(dialect);

  async function withWebhook(env: Record<string, string> = {}) {
    const t = await open({ ...HOOK_ENV, ...env });
    const admin = await seedAdmin(t.services);
    await addWebhook(t.services, { url: 'http://127.0.0.1:9/hook' });
    return { t, admin, ref: { schoolId: admin.schoolId, username: admin.username } };
  }

  it('a password change goes to the admin by e-mail and to the platform by webhook, with the facts in the payload', async () => {
    const { t, ref } = await withWebhook();
    await setAdminEmail(t.services, ref, 'Alice@Lincoln.example');
    await changePassword(t.services, ref, 'a brand new passphrase');
    expect(await outbox(t)).toEqual(['admin.password_changed email', 'admin.password_changed webhook']);
    const message = await t.services.db.selectFrom('outbox').selectAll().where('channel', '=', 'webhook').executeTakeFirstOrThrow();
    const payload = JSON.parse(message.payload) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(payload.type).toBe('admin.password_changed');
    expect(payload.timestamp).toBe(new Date(t.clock.now()).toISOString());
    expect(payload.data).toMatchObject({ school_id: 'lincoln-high', username: 'alice', ip: null, detail: '0 sessions ended' });
    expect(message.id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(message.state).toBe('pending');
  });

  it('an admin without an address is told of nothing by e-mail; the platform still is', async () => {
    const { t, ref } = await withWebhook();
    await setAdminEnabled(t.services, ref, false);
    await setAdminEnabled(t.services, ref, true);
    expect(await outbox(t)).toEqual(['admin.disabled webhook', 'admin.enabled webhook']);
  });

  it('events that do not notify write nothing, and a revoked signing key goes to the platform only', async () => {
    const { t, admin, ref } = await withWebhook();
    await setAdminEmail(t.services, ref, 'alice@lincoln.example');
    await signIn(t.app, admin);
    expect(await outbox(t)).toEqual([]);
    const [key] = await t.services.db.selectFrom('signing_keys').select('kid').execute();
    await revokeSigningKey(t.services, key?.kid ?? '');
    expect(await outbox(t)).toEqual(['keys.revoked webhook']);
  });

  it('a sign-in from a new address notifies once; the first sign-in ever and a known address do not', async () => {
    const { t, admin } = await withWebhook();
    const from = (ip: string) =>
      t.app.inject({ method: 'POST', url: '/admin/auth/login', remoteAddress: ip, payload: { school_id: admin.schoolId, username: admin.username, password: PASSWORD } });
    expect((await from('203.0.113.1')).statusCode).toBe(200);
    expect((await from('203.0.113.1')).statusCode).toBe(200);
    expect(await outbox(t)).toEqual([]);
    expect((await from('198.51.100.7')).statusCode).toBe(200);
    expect((await from('198.51.100.7')).statusCode).toBe(200);
    expect(await outbox(t)).toEqual(['login.new_address webhook']);
    const message = await t.services.db.selectFrom('outbox').select('payload').executeTakeFirstOrThrow();
    expect(JSON.parse(message.payload)).toMatchObject({ data: { ip: '198.51.100.7', detail: '198.51.100.7' } });
  });

  it('a sign-in from a new address is told with the login throttle off too', async () => {
    const { t, admin } = await withWebhook({ LOGIN_THROTTLE: 'off' });
    const from = (ip: string) =>
      t.app.inject({ method: 'POST', url: '/admin/auth/login', remoteAddress: ip, payload: { school_id: admin.schoolId, username: admin.username, password: PASSWORD } });
    expect((await from('203.0.113.1')).statusCode).toBe(200);
    expect((await from('198.51.100.7')).statusCode).toBe(200);
    expect(await outbox(t)).toEqual(['login.new_address webhook']);
  });

  it('second factors: enrolled, recovery codes renewed and used, removed, reset by an operator', async () => {
    const { t, admin, ref } = await withWebhook();
    const enrolled = await adminWithTotp(t, admin);
    const codes = enrolled.confirmed.recovery_codes ?? [];
    const mfaToken = await passwordStep(t, admin);
    const used = await verify(t, mfaToken, codes[0] ?? '', 'recovery_code');
    expect(used.statusCode, used.body).toBe(200);
    const aal2 = used.json<{ access_token: string }>().access_token;
    const renewed = await postJson(t.app, '/admin/auth/mfa/recovery-codes', {}, bearer(aal2));
    expect(renewed.statusCode, renewed.body).toBe(200);
    const removed = await t.app.inject({ method: 'DELETE', url: `/admin/auth/mfa/${enrolled.factorId}`, headers: bearer(aal2) });
    expect(removed.statusCode, removed.body).toBe(204);
    await resetAdminMfa(t.services, ref);
    expect(await outbox(t)).toEqual([
      'mfa.enrolled webhook',
      'mfa.recovery_code_used webhook',
      'mfa.recovery_codes_renewed webhook',
      'mfa.removed webhook',
      'mfa.reset webhook',
    ]);
  });

  it('an account locked by failed sign-ins notifies; a made-up username locked alike tells nobody', async () => {
    const { t, admin } = await withWebhook({ LOCKOUT_FAILURES: '3' });
    const wrong = (username: string) => postJson(t.app, '/admin/auth/login', { school_id: admin.schoolId, username, password: 'not the password' });
    for (let n = 0; n < 3; n++) expect((await wrong('alice')).statusCode).toBe(401);
    for (let n = 0; n < 3; n++) expect((await wrong('mallory')).statusCode).toBe(401);
    expect(await outbox(t)).toEqual(['account.locked webhook']);
    const locks = await t.services.db.selectFrom('events').select('username').where('type', '=', 'account.locked').orderBy('id').execute();
    expect(locks.map((row) => row.username)).toEqual(['alice', 'mallory']);
  });

  it('a refresh token used twice ends the session as stolen and tells the admin', async () => {
    const { t, admin } = await withWebhook({ REFRESH_TOKEN_ROTATION: 'true', REFRESH_REUSE_GRACE: '0' });
    const tokens = await signIn(t.app, admin);
    const refresh = () => postJson(t.app, '/auth/refresh', { refresh_token: tokens.refresh_token });
    expect((await refresh()).statusCode).toBe(200);
    t.clock.advance(1);
    expect((await refresh()).statusCode).toBe(401);
    expect(await outbox(t)).toEqual(['refresh.reuse webhook']);
  });

  it('a change whose transaction rolls back leaves neither its event nor its messages', async () => {
    const { t } = await withWebhook();
    const failing = t.services.db.transaction().execute(async (trx) => {
      await recordEvent(trx, t.clock, CLI_CONTEXT, { type: 'keys.revoked', detail: 'rolled back' });
      throw new Error('the change failed');
    });
    await expect(failing).rejects.toThrow('the change failed');
    expect(await outbox(t)).toEqual([]);
    expect(await t.services.db.selectFrom('events').select('id').where('detail', '=', 'rolled back').execute()).toEqual([]);
  });
});
