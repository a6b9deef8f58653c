import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { generateTotpSecret, matchTotpStep, otpauthUri } from '../../../src/auth/mfa/totp.js';
import { Secret } from 'otpauth';

/** RFC 6238 Appendix B, SHA-1 rows: the seed is the ASCII string "12345678901234567890". */
const RFC6238_SHA1 = [
  { time: 59, otp: '94287082' },
  { time: 1111111109, otp: '07081804' },
  { time: 1111111111, otp: '14050471' },
  { time: 1234567890, otp: '89005924' },
  { time: 2000000000, otp: '69279037' },
  { time: 20000000000, otp: '65353130' },
];

describe('TOTP (RFC 6238)', () => {
  const seed = Secret.fromLatin1('12345678901234567890');

  it.each(RFC6238_SHA1)('the library computes the Appendix B value at T=$time', ({ time, otp }) => {
    const totp = new TOTP({ algorithm: 'SHA1', digits: 8, period: 30, secret: seed });
    expect(totp.generate({ timestamp: time * 1000 })).toBe(otp);
  });

  it('matches a code of the current step and one step either way, and names its step', () => {
    const secret = seed.base32;
    const now = 1111111111 * 1000;
    const step = Math.floor(1111111111 / 30);
    const sixDigits = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: seed });
    expect(sixDigits.generate({ timestamp: now })).toBe('050471');
    for (const drift of [-1, 0, 1]) {
      const code = sixDigits.generate({ timestamp: now + drift * 30_000 });
      expect(matchTotpStep(secret, code, now), `drift ${drift}`).toBe(step + drift);
    }
    for (const drift of [-2, 2]) {
      const code = sixDigits.generate({ timestamp: now + drift * 30_000 });
      expect(matchTotpStep(secret, code, now), `drift ${drift}`).toBeUndefined();
    }
  });

  it('refuses anything but six digits', () => {
    const secret = seed.base32;
    for (const code of ['', '05047', '0504710', ' 050471', '05047a']) expect(matchTotpStep(secret, code, 1111111111 * 1000)).toBeUndefined();
  });

  it('generates 160-bit base32 secrets and an otpauth URI that carries the settings', () => {
    const secret = generateTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(generateTotpSecret()).not.toBe(secret);
    const uri = new URL(otpauthUri(secret, 'school-auth', 'lincoln-high:alice'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('algorithm')).toBe('SHA1');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');
    expect(uri.searchParams.get('issuer')).toBe('school-auth');
  });
});
