import { describe, expect, it } from 'vitest';
import { changePassword } from '../../../src/auth/accounts/admins.js';
import { resetAdminMfa } from '../../../src/auth/mfa/operator.js';
import { seedAdmin, useTestApps } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp, passwordStep, totpCode, verify } from '../../helpers/mfa.js';
import { useKeyFiles } from '../../helpers/key-files.js';

const newKeyFile = useKeyFiles();

describe.each(TEST_DIALECTS)('second-factor secrets and incidents on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('with KEY_ENCRYPTION_KEY_FILE the stored TOTP secret is sealed, and codes still verify', async () => {
    const t = await open({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const [row] = await t.services.db.selectFrom('mfa_factors').select('secret').execute();
    expect(row?.secret).toMatch(/^enc:v1:/);
    expect(row?.secret).not.toContain(secret);
    expect((await verify(t, await passwordStep(t, admin), totpCode(t, secret))).statusCode).toBe(200);
  });

  it('without a key file the secret is stored as it is, and never in an event', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const [row] = await t.services.db.selectFrom('mfa_factors').select('secret').execute();
    expect(row?.secret).toBe(secret);
    const events = await t.services.db.selectFrom('events').selectAll().execute();
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('a password change between the password step and the second factor leaves no session', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    await changePassword(t.services, admin, 'an entirely new passphrase 42');
    const refused = await verify(t, mfaToken, totpCode(t, secret));
    expect(refused.statusCode).toBe(401);
    // The password change ended the pending mfa_token itself, not only the session it would start.
    expect(refused.json()).toEqual({ detail: 'Invalid or expired mfa_token' });
    const live = await t.services.db.selectFrom('sessions').select('id').where('revoked_at', 'is', null).execute();
    expect(live).toEqual([]);
  });

  it('admin mfa reset kills pending mfa_tokens', async () => {
    const t = await open();
    const admin = await seedAdmin(t.services);
    const { secret } = await adminWithTotp(t, admin);
    const mfaToken = await passwordStep(t, admin);
    await resetAdminMfa(t.services, admin);
    expect((await verify(t, mfaToken, totpCode(t, secret))).json()).toEqual({ detail: 'Invalid or expired mfa_token' });
  });
});
