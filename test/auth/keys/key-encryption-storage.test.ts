import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { encryptStoredSecrets } from '../../../src/auth/key-encryption-upgrade.js';
import { SigningKeys } from '../../../src/auth/keys/signing-keys.js';
import { listSigningKeys } from '../../../src/db/queries/signing-keys.js';
import { openServices } from '../../../src/services.js';
import { seedAdmin, signIn, testConfig, useTestApps } from '../../helpers/app.js';
import { TestClock } from '../../helpers/clock.js';
import { me } from '../../helpers/contract.js';
import { createTestDatabase, TEST_DIALECTS } from '../../helpers/database.js';
import { useKeyFiles } from '../../helpers/key-files.js';

const newKeyFile = useKeyFiles();

describe.each(TEST_DIALECTS)('private signing keys at rest on %s', (dialect) => {
  const open = useTestApps(dialect);

  it('with KEY_ENCRYPTION_KEY_FILE the stored private key is not the plaintext JWK; tokens sign and verify', async () => {
    const t = await open({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    const admin = await seedAdmin(t.services);
    const tokens = await signIn(t.app, admin);
    expect((await me(t.app, tokens.access_token)).statusCode).toBe(200);

    const [row, ...others] = await listSigningKeys(t.services.db);
    expect(others).toEqual([]);
    expect(row?.kid).toBe(decodeProtectedHeader(tokens.access_token).kid);
    expect(row?.private_jwk).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(row?.private_jwk).not.toContain('"d"');
    // The published key verifies what the encrypted private key signed.
    const publicJwk = JSON.parse(row?.public_jwk ?? '{}') as JWK;
    await expect(compactVerify(tokens.access_token, await importJWK(publicJwk, row?.alg))).resolves.toBeDefined();
  });

  it('a plaintext key still signs once encryption is on; after keys encrypt it signs encrypted; without or with another key file the server refuses to start', async () => {
    const database = await createTestDatabase(dialect);
    const clock = new TestClock();
    const keyFile = newKeyFile();
    const plain = await openServices(testConfig(), { clock, database });
    await plain.hasher.close();
    const [before] = await listSigningKeys(database.db);
    expect(before?.private_jwk.startsWith('{')).toBe(true);

    const encrypted = await openServices(testConfig({ KEY_ENCRYPTION_KEY_FILE: keyFile }), { clock, database });
    await encrypted.hasher.close();
    expect((await encrypted.keys.signer()).kid).toBe(before?.kid);

    expect(await encryptStoredSecrets(encrypted)).toEqual({ encrypted: [before?.kid], alreadyEncrypted: 0, sealedTotp: 0, alreadySealedTotp: 0, sealedClientSecrets: 0 });
    expect(await encryptStoredSecrets(encrypted)).toEqual({ encrypted: [], alreadyEncrypted: 1, sealedTotp: 0, alreadySealedTotp: 0, sealedClientSecrets: 0 });
    const [after] = await listSigningKeys(database.db);
    expect(after?.private_jwk).toMatch(/^enc:v1:/);
    const reloaded = await new SigningKeys(database.db, encrypted.config, clock).signer();
    expect(reloaded.kid).toBe(before?.kid);
    expect(reloaded.privateKey.export({ format: 'jwk' })).toEqual(JSON.parse(before?.private_jwk ?? '{}'));

    const otherFile = testConfig({ KEY_ENCRYPTION_KEY_FILE: newKeyFile() });
    await expect(new SigningKeys(database.db, otherFile, clock).ensureKey()).rejects.toThrow(/cannot be decrypted with KEY_ENCRYPTION_KEY_FILE/);
    // The refused start closes the database it opened.
    await expect(openServices(testConfig(), { clock, database })).rejects.toThrow(/stored encrypted: set KEY_ENCRYPTION_KEY_FILE/);
  });
});
