import { describe, expect, it } from 'vitest';
import { encryptStoredSecrets } from '../../../src/auth/key-encryption-upgrade.js';
import { openFactorSecret, sealFactorSecret } from '../../../src/auth/mfa/secret-box.js';
import { replaceTotpSecret } from '../../../src/db/queries/mfa-secrets.js';
import type { KeyEncryptionKey } from '../../../src/config/key-encryption-key.js';
import { openServices } from '../../../src/services.js';
import { seedAdmin, testConfig, useTestApps, type TestApp } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { TEST_DIALECTS, createTestDatabase } from '../../helpers/database.js';
import { adminWithTotp } from '../../helpers/mfa.js';
import { useKeyFiles } from '../../helpers/key-files.js';

const newKeyFile = useKeyFiles();

function newKey(): KeyEncryptionKey {
  const key = testConfig({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() }).keyEncryption;
  if (key === undefined) throw new Error('the test key file was not read');
  return key;
}

/** Alice and bob, each with a confirmed TOTP factor stored as the app stores it. */
async function twoAdminsWithTotp(t: TestApp) {
  const alice = await adminWithTotp(t, await seedAdmin(t.services));
  const bob = await adminWithTotp(t, await seedAdmin(t.services, { username: 'bob' }));
  return [alice, bob];
}

function stored(t: TestApp) {
  return t.services.db.selectFrom('mfa_factors').select(['id', 'secret']).orderBy('id').execute();
}

describe.each(TEST_DIALECTS)('sealing stored TOTP secrets on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('two runs at once seal each plaintext secret exactly once, and each opens to its secret', async () => {
    const t = await open();
    const admins = await twoAdminsWithTotp(t);
    const keyEncryption = newKey();
    const context = { db: t.services.db, clock: t.clock, config: { keyEncryption } };
    const runs = await Promise.all([encryptStoredSecrets(context), encryptStoredSecrets(context)]);
    expect(runs.map((run) => run.sealedTotp).reduce((a, b) => a + b)).toBe(2);
    for (const run of runs) expect(run.sealedTotp + run.alreadySealedTotp).toBe(2);
    for (const { factorId, secret } of admins) {
      const row = (await stored(t)).find(({ id }) => id === factorId);
      expect(row?.secret).toMatch(/^enc:v1:/);
      expect(openFactorSecret(row?.secret ?? '', factorId, keyEncryption)).toBe(secret);
    }
    expect(await encryptStoredSecrets(context)).toMatchObject({ sealedTotp: 0, alreadySealedTotp: 2 });
  });

  it('a secret that changed since it was read is not overwritten, and a passkey row is never a TOTP secret', async () => {
    const t = await open();
    const [alice] = await twoAdminsWithTotp(t);
    const factorId = alice?.factorId ?? '';
    const keyEncryption = newKey();
    // What a concurrent re-enrollment would have written after `keys encrypt` read the row.
    await t.services.db.updateTable('mfa_factors').set({ secret: 'JBSWY3DPEHPK3PXP' }).where('id', '=', factorId).execute();
    const staleSeal = sealFactorSecret(alice?.secret ?? '', factorId, keyEncryption);
    expect(await replaceTotpSecret(t.services.db, factorId, alice?.secret ?? '', staleSeal)).toBe(false);
    expect((await stored(t)).find(({ id }) => id === factorId)?.secret).toBe('JBSWY3DPEHPK3PXP');

    await t.services.db.updateTable('mfa_factors').set({ type: 'webauthn', secret: '' }).where('id', '=', factorId).execute();
    expect(await replaceTotpSecret(t.services.db, factorId, '', sealFactorSecret('', factorId, keyEncryption))).toBe(false);
    expect(await encryptStoredSecrets({ db: t.services.db, clock: t.clock, config: { keyEncryption } })).toMatchObject({ sealedTotp: 1, alreadySealedTotp: 0 });
    expect((await stored(t)).find(({ id }) => id === factorId)?.secret).toBe('');
  });

  it('refuses, before sealing anything, when a secret is sealed under another key file', async () => {
    const first = newKeyFile();
    const t = await open({ KEY_ENCRYPTION_KEY_FILE: first });
    const [, bob] = await twoAdminsWithTotp(t);
    const bobId = bob?.factorId ?? '';
    await t.services.db.updateTable('mfa_factors').set({ secret: bob?.secret ?? '' }).where('id', '=', bobId).execute();
    const before = await stored(t);
    const other = newKey();
    await expect(encryptStoredSecrets({ db: t.services.db, clock: t.clock, config: { keyEncryption: other } })).rejects.toThrow(
      new RegExp(`cannot be decrypted with KEY_ENCRYPTION_KEY_FILE ${other.file}`),
    );
    expect(await stored(t)).toEqual(before);
    await expect(encryptStoredSecrets({ db: t.services.db, clock: t.clock, config: { keyEncryption: undefined } })).rejects.toThrow(
      'keys encrypt needs KEY_ENCRYPTION_KEY_FILE',
    );
  });
});

describe.each(TEST_DIALECTS)('the server start and sealed TOTP secrets on %s', (dialect) => {
  /** A database whose one TOTP secret is sealed under a key file the next start is not given. */
  async function databaseWithSealedSecret() {
    const database = await createTestDatabase(dialect);
    const clock = new TestClock();
    const services = await openServices(testConfig(), { clock, database });
    await services.hasher.close();
    await seedAdmin(services);
    const admin = await database.db.selectFrom('admins').select('id').executeTakeFirstOrThrow();
    const factorId = 'f-sealed';
    const secret = sealFactorSecret('JBSWY3DPEHPK3PXP', factorId, newKey());
    const factor = { id: factorId, admin_id: admin.id, type: 'totp', name: 'app', secret, confirmed_at: 1, created_at: 1, last_used_at: null, last_used_step: null };
    await database.db.insertInto('mfa_factors').values(factor).execute();
    return { database, clock };
  }

  it('refuses to start without the key file a stored TOTP secret was sealed with, naming the variable', async () => {
    const { database, clock } = await databaseWithSealedSecret();
    await expect(openServices(testConfig(), { clock, database })).rejects.toThrow(/TOTP secret of mfa factor f-sealed is stored encrypted: set KEY_ENCRYPTION_KEY_FILE/);
  });

  it('refuses to start with another key file', async () => {
    const { database, clock } = await databaseWithSealedSecret();
    const other = testConfig({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    await expect(openServices(other, { clock, database })).rejects.toThrow(/TOTP secret of mfa factor f-sealed cannot be decrypted with KEY_ENCRYPTION_KEY_FILE/);
  });
});
