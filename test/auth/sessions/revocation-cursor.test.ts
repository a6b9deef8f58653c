/** The feed cursor's parser: what it gave out comes back; anything else is a 400 or, for the older format, the start. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../../src/auth/sessions/revocation-feed.js';
import { AppError } from '../../../src/errors.js';

const sid = fc.stringMatching(/^[A-Za-z0-9_-]{0,64}$/);
const position = fc.record({ seq: fc.nat({ max: Number.MAX_SAFE_INTEGER }).filter((n) => String(n).length <= 15), sid });

describe('the revocation feed cursor', () => {
  it('decodes every cursor it encodes to the same position', () => {
    fc.assert(
      fc.property(position, (p) => {
        expect(decodeCursor(encodeCursor(p))).toEqual(p);
      }),
    );
  });

  it('reads a cursor of the older format (revoked_at:sid) as the start of the feed', () => {
    fc.assert(
      fc.property(fc.nat({ max: 999_999_999_999 }), sid, (at, s) => {
        expect(decodeCursor(Buffer.from(`${at}:${s}`).toString('base64url'))).toEqual({ seq: 0, sid: '' });
      }),
    );
  });

  it('answers anything else with INVALID_CURSOR, never another error', () => {
    const anything = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 80 }).map((text) => Buffer.from(text).toString('base64url')));
    fc.assert(
      fc.property(anything, (cursor) => {
        try {
          const decoded = decodeCursor(cursor);
          expect(encodeCursor(decoded) === cursor || decoded.seq === 0).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe('INVALID_CURSOR');
        }
      }),
    );
  });
});
