import { createCipheriv, hash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateRefreshToken, hashRefreshToken, openSuccessor, sealSuccessor } from '../../../src/auth/sessions/refresh-token.js';

/** A successor sealed the way releases before the one-time pad sealed it (AES-256-GCM). */
function sealedWithGcm(previousToken: string, successor: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', hash('sha256', `school-auth/successor-key\0${previousToken}`, 'buffer'), iv);
  const sealed = Buffer.concat([cipher.update(successor, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

describe('the sealed successor of a rotated refresh token', () => {
  it('opens with the token it was sealed under', () => {
    const previous = generateRefreshToken();
    const successor = generateRefreshToken();
    expect(openSuccessor(previous, sealSuccessor(previous, successor))).toBe(successor);
  });

  it('is 32 bytes that show neither the successor nor anything the stored hashes give', () => {
    const previous = generateRefreshToken();
    const successor = generateRefreshToken();
    const sealed = sealSuccessor(previous, successor);
    expect(Buffer.from(sealed, 'base64url')).toHaveLength(32);
    expect(sealed).not.toBe(successor);
    // What the database holds beside it (both tokens' hashes) does not open it.
    expect(openSuccessor(hashRefreshToken(previous), sealed)).not.toBe(successor);
    expect(openSuccessor(hashRefreshToken(successor), sealed)).not.toBe(successor);
  });

  it('opens to a different value under any other token', () => {
    const previous = generateRefreshToken();
    const successor = generateRefreshToken();
    expect(openSuccessor(generateRefreshToken(), sealSuccessor(previous, successor))).not.toBe(successor);
  });

  it('still opens a successor sealed by the release before (a rotation in flight during an upgrade)', () => {
    const previous = generateRefreshToken();
    const successor = generateRefreshToken();
    expect(openSuccessor(previous, sealedWithGcm(previous, successor))).toBe(successor);
    expect(openSuccessor(generateRefreshToken(), sealedWithGcm(previous, successor))).toBeUndefined();
  });

  it('refuses to seal anything but a refresh token, which the pad covers whole', () => {
    const previous = generateRefreshToken();
    expect(() => sealSuccessor(previous, randomBytes(40).toString('base64url'))).toThrow(/32 bytes/);
    expect(() => sealSuccessor(previous, 'short')).toThrow(/32 bytes/);
  });

  it('opens nothing from a value of neither form', () => {
    const previous = generateRefreshToken();
    expect(openSuccessor(previous, '')).toBeUndefined();
    expect(openSuccessor(previous, randomBytes(20).toString('base64url'))).toBeUndefined();
    expect(openSuccessor(previous, randomBytes(71).toString('base64url'))).toBeUndefined();
  });
});
