import { createSecretKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkStoredKeysOpen, isSealed, KeyEncryptionError, openPrivateJwk, sealPrivateJwk, SEALED_PREFIX } from '../../../src/auth/keys/key-encryption.js';
import { UsageError } from '../../../src/errors.js';
import { KeyEncryptionKey } from '../../../src/config/key-encryption-key.js';

const JWK = JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x-coordinate', y: 'y-coordinate', d: 'the-private-scalar' });

function newKey(file = '/etc/school-auth/kek'): KeyEncryptionKey {
  return new KeyEncryptionKey(file, createSecretKey(randomBytes(32)));
}

/** The sealed form with one byte of its decoded payload flipped. */
function flipByte(sealed: string, index: number): string {
  const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return SEALED_PREFIX + bytes.toString('base64url');
}

describe('private key encryption at rest', () => {
  it('round trip: the sealed form is prefixed, hides the JWK and opens to it with the same key', () => {
    const key = newKey();
    const sealed = sealPrivateJwk(JWK, 'kid-1', key);
    expect(sealed.startsWith(SEALED_PREFIX)).toBe(true);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('the-private-scalar');
    expect(Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url').toString('latin1')).not.toContain('the-private-scalar');
    expect(openPrivateJwk(sealed, 'kid-1', key)).toBe(JWK);
  });

  it('seals the same key differently each time (fresh IV)', () => {
    const key = newKey();
    expect(sealPrivateJwk(JWK, 'kid-1', key)).not.toBe(sealPrivateJwk(JWK, 'kid-1', key));
  });

  it('a wrong key file is refused with a message naming KEY_ENCRYPTION_KEY_FILE and the file', () => {
    const sealed = sealPrivateJwk(JWK, 'kid-1', newKey());
    const open = () => openPrivateJwk(sealed, 'kid-1', newKey('/etc/other-kek'));
    expect(open).toThrow(KeyEncryptionError);
    expect(open).toThrow(/signing key kid-1 cannot be decrypted with KEY_ENCRYPTION_KEY_FILE \/etc\/other-kek/);
  });

  it('a sealed key without a key file is refused naming KEY_ENCRYPTION_KEY_FILE, as an error the operator acts on', () => {
    const sealed = sealPrivateJwk(JWK, 'kid-1', newKey());
    const open = () => openPrivateJwk(sealed, 'kid-1', undefined);
    expect(open).toThrow(UsageError);
    expect(open).toThrow(/signing key kid-1 is stored encrypted: set KEY_ENCRYPTION_KEY_FILE/);
  });

  it('any altered byte of IV, tag or ciphertext is refused', () => {
    const key = newKey();
    const sealed = sealPrivateJwk(JWK, 'kid-1', key);
    for (const index of [0, 11, 12, 27, 28, 40]) {
      expect(() => openPrivateJwk(flipByte(sealed, index), 'kid-1', key)).toThrow(KeyEncryptionError);
    }
    expect(() => openPrivateJwk(sealed.slice(0, SEALED_PREFIX.length + 20), 'kid-1', key)).toThrow(KeyEncryptionError);
  });

  it('a sealed key moved to another row (another kid) is refused', () => {
    const key = newKey();
    const sealed = sealPrivateJwk(JWK, 'kid-1', key);
    expect(() => openPrivateJwk(sealed, 'kid-2', key)).toThrow(KeyEncryptionError);
  });

  it('plaintext rows load as they are (upgrade path), with or without a key file; no key file stores plaintext', () => {
    expect(openPrivateJwk(JWK, 'kid-1', newKey())).toBe(JWK);
    expect(openPrivateJwk(JWK, 'kid-1', undefined)).toBe(JWK);
    expect(sealPrivateJwk(JWK, 'kid-1', undefined)).toBe(JWK);
  });

  it('checkStoredKeysOpen accepts plaintext and keys sealed with this file, refuses a key of another file', () => {
    const key = newKey();
    const rows = [
      { kid: 'old', private_jwk: JWK },
      { kid: 'new', private_jwk: sealPrivateJwk(JWK, 'new', key) },
    ];
    expect(() => checkStoredKeysOpen(rows, key)).not.toThrow();
    expect(() => checkStoredKeysOpen(rows, newKey())).toThrow(/signing key new cannot be decrypted/);
    expect(() => checkStoredKeysOpen(rows, undefined)).toThrow(/KEY_ENCRYPTION_KEY_FILE/);
  });

  it('serializes as its file name only, never the key bytes', () => {
    expect(JSON.stringify({ keyEncryption: newKey('/run/secrets/kek') })).toBe('{"keyEncryption":{"file":"/run/secrets/kek"}}');
  });
});
