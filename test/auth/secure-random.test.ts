import { describe, expect, it } from 'vitest';
import { secureRandomBytes } from '../../src/auth/secure-random.js';
import { generateTotpSecret } from '../../src/auth/mfa/totp.js';

describe('secureRandomBytes', () => {
  it('hands out the requested sizes, never the same bytes twice, across many refills of the pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const size = [12, 16, 32][i % 3]!;
      const bytes = secureRandomBytes(size);
      expect(bytes.length).toBe(size);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(3000);
  });

  it('gives each caller a buffer of its own, exactly as large as asked, which later draws do not change', () => {
    const first = secureRandomBytes(20);
    const copy = Buffer.from(first);
    // A view into a shared slab would hand its other bytes out through `.buffer` (a TOTP secret).
    expect(first.buffer.byteLength).toBe(20);
    expect(first.byteOffset).toBe(0);
    for (let i = 0; i < 300; i++) secureRandomBytes(32);
    expect(first.equals(copy)).toBe(true);
  });

  it('makes TOTP secrets of exactly 160 bits, from the buffer it hands out', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateTotpSecret()));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  });

  it('looks uniform: every byte value appears, at about the expected rate', () => {
    const counts = new Array<number>(256).fill(0);
    const draws = 2000;
    for (let i = 0; i < draws; i++) for (const byte of secureRandomBytes(32)) counts[byte]! += 1;
    const expected = (draws * 32) / 256;
    // 250 per value on average; a fixed or zeroed pool would be off by far more than this.
    expect(Math.min(...counts)).toBeGreaterThan(expected * 0.7);
    expect(Math.max(...counts)).toBeLessThan(expected * 1.3);
  });

  it('serves sizes larger than the pool directly', () => {
    const big = secureRandomBytes(10_000);
    expect(big.length).toBe(10_000);
    expect(new Set(big).size).toBeGreaterThan(200);
  });
});
