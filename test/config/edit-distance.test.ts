import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editDistance } from '../../src/config/edit-distance.js';

describe('editDistance (Damerau-Levenshtein, optimal string alignment)', () => {
  it('counts insertions, deletions, substitutions and swaps of neighbours as one edit each', () => {
    expect(editDistance('ISSUER', 'ISSUER')).toBe(0);
    expect(editDistance('ISUER', 'ISSUER')).toBe(1);
    expect(editDistance('ISSUERS', 'ISSUER')).toBe(1);
    expect(editDistance('ISSUEP', 'ISSUER')).toBe(1);
    expect(editDistance('ISSEUR', 'ISSUER')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
    expect(editDistance('', 'PORT')).toBe(4);
    expect(editDistance('CA', 'ABC')).toBe(3);
  });

  it('is symmetric and bounded by the longer length', () => {
    const word = fc.string({ unit: fc.constantFrom('A', 'B', 'C', '_'), maxLength: 10 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        const distance = editDistance(a, b);
        expect(editDistance(b, a)).toBe(distance);
        expect(distance).toBeLessThanOrEqual(Math.max(a.length, b.length));
        expect(distance === 0).toBe(a === b);
      }),
    );
  });
});
