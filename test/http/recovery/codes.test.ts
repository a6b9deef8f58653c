/** Recovery codes: one live code per admin, single use, for PASSWORD_RECOVERY_TTL; refusals all alike. */
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import {
  INVALID_CODE_BODY,
  NEW_PASSWORD,
  adminWithAddress,
  codeIn,
  forgot,
  latestCode,
  login,
  passwordRecoveryRows,
  recoveryMessages,
  reset,
  stableHeaders,
  useRecoveryApps,
  type RecoveryApp,
} from './recovery-world.js';

/** The answer of a refused reset, as compared: status, body and headers but those that change every time. */
function refusal(response: Awaited<ReturnType<typeof reset>>) {
  return { status: response.statusCode, body: response.body, headers: stableHeaders(response) };
}

/** A code that is no admin's: well formed, 43 base64url characters. */
const MADE_UP = 'A'.repeat(43);

describe.each(TEST_DIALECTS)('recovery codes on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  async function withCode(t: RecoveryApp, username: string) {
    const admin = await adminWithAddress(t, username, `${username}@lincoln-high.example`);
    expect((await forgot(t, admin)).statusCode).toBe(202);
    return { admin, code: await latestCode(t, admin.id) };
  }

  it('a wrong, a spent and an expired code and an unknown admin all get the identical 401', async () => {
    const t = await open();
    const { admin: alice, code: aliceCode } = await withCode(t, 'alice');
    const { admin: bob, code: bobCode } = await withCode(t, 'bob');
    const ttl = t.config.passwordRecovery.ttl;
    expect(ttl).toBe(900);

    const wrong = await reset(t, alice, MADE_UP);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toBe(INVALID_CODE_BODY);
    // Another admin's code is as wrong as a made-up one.
    const othersCode = await reset(t, alice, bobCode);
    const unknownAdmin = await reset(t, { schoolId: alice.schoolId, username: 'nobody' }, aliceCode);
    const unknownSchool = await reset(t, { schoolId: 'no-such-school', username: 'alice' }, aliceCode);

    // Still live one second before the end of its TTL: alice's code works once...
    t.clock.advance(ttl - 1);
    expect((await reset(t, alice, aliceCode)).statusCode).toBe(204);
    const spent = await reset(t, alice, aliceCode, 'another new passphrase 12');
    // ...and bob's, asked for at the same instant, has expired a second later.
    t.clock.advance(1);
    const expired = await reset(t, bob, bobCode);

    for (const [name, response] of Object.entries({ othersCode, unknownAdmin, unknownSchool, spent, expired })) {
      expect(refusal(response), name).toEqual(refusal(wrong));
    }
    // The spent code set nothing: the password is the one set with it.
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await login(t, alice, 'another new passphrase 12')).statusCode).toBe(401);
    expect((await login(t, bob, PASSWORD)).statusCode).toBe(200);
    // Every failed guess is in the audit trail, made-up accounts' too (without an admin id), so
    // a refusal costs the same whoever it names.
    const failed = await t.services.db.selectFrom('events').select(['admin_id', 'username']).where('type', '=', 'admin.password_recovery_failed').execute();
    expect(failed.filter((event) => event.admin_id !== null).map((event) => event.username).sort()).toEqual(['alice', 'alice', 'alice', 'bob']);
    expect(failed.filter((event) => event.admin_id === null)).toHaveLength(2);
  });

  it('a new request replaces the code: the old one is refused, the new one works', async () => {
    const t = await open();
    const { admin: alice, code: first } = await withCode(t, 'alice');
    t.clock.advance(60);
    expect((await forgot(t, alice)).statusCode).toBe(202);
    const second = await latestCode(t);
    expect(second).not.toBe(first);
    expect((await passwordRecoveryRows(t)).map((row) => row.admin_id)).toEqual([alice.id]);

    expect((await reset(t, alice, first)).body).toBe(INVALID_CODE_BODY);
    expect((await reset(t, alice, second)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('mails at most 5 codes an hour to one admin: the 6th request changes nothing and the 5th code still works', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    for (let request = 1; request <= 6; request += 1) {
      expect((await forgot(t, alice)).statusCode).toBe(202);
      t.clock.advance(60);
    }
    const mailed = await recoveryMessages(t);
    expect(mailed).toHaveLength(5);
    const codes = mailed.map((message) => codeIn(t, message));
    expect(new Set(codes).size).toBe(5);
    expect((await passwordRecoveryRows(t))[0]).toMatchObject({ admin_id: alice.id, requests: 5 });

    expect((await reset(t, alice, codes[3] ?? '')).body).toBe(INVALID_CODE_BODY);
    expect((await reset(t, alice, codes[4] ?? '')).statusCode).toBe(204);
  });

  it('mails again once the hour of the first of 5 requests is over', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    for (let request = 1; request <= 6; request += 1) await forgot(t, alice);
    expect(await recoveryMessages(t)).toHaveLength(5);
    t.clock.advance(3599);
    await forgot(t, alice);
    expect(await recoveryMessages(t)).toHaveLength(5);
    t.clock.advance(1);
    await forgot(t, alice);
    expect(await recoveryMessages(t)).toHaveLength(6);
    expect((await reset(t, alice, await latestCode(t))).statusCode).toBe(204);
  });

  it('a weak new password is a 422 in FastAPI shape that never echoes it, and spends neither the code nor a guess', async () => {
    const t = await open();
    const { admin: alice, code } = await withCode(t, 'alice');
    // More weak attempts than the 5 guesses an address has: none of them counted as one.
    for (let attempt = 0; attempt < 7; attempt += 1) {
      const weak = await reset(t, alice, code, 'short');
      expect(weak.statusCode).toBe(422);
      expect(weak.json()).toEqual({
        detail: [
          {
            type: 'value_error',
            loc: ['body', 'new_password'],
            msg: 'Value error, the password must be at least 12 characters long',
            input: '[redacted]',
            ctx: { error: {} },
          },
        ],
      });
    }
    const named = await reset(t, alice, code, 'Lincoln-High');
    expect(named.statusCode).toBe(422);
    expect(named.body).not.toContain('Lincoln-High');
    expect(named.body).not.toContain(code);

    expect((await reset(t, alice, code)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });
});
