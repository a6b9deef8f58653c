/** Requests and resets that arrive at once are limited and decided exactly as sequential ones. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../../helpers/app.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { FORGOT, adminWithAddress, codeIn, latestCode, login, passwordRecoveryRows, recoveryMessages, reset, settle, useRecoveryApps } from './recovery-world.js';

const digest = (code: string) => createHash('sha256').update(code).digest('base64url');

describe.each(TEST_DIALECTS)('password recovery under concurrent requests on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  it('8 requests for one admin at once mail exactly 5 codes, and the live code is one of them', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        t.app.inject({
          method: 'POST',
          url: FORGOT,
          remoteAddress: `192.0.2.${index + 1}`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ school_id: alice.schoolId, username: alice.username }),
        }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(8).fill(202));
    await settle(t);

    const codes = (await recoveryMessages(t)).map((message) => codeIn(t, message));
    expect(codes).toHaveLength(5);
    const [row] = await passwordRecoveryRows(t);
    expect(row?.requests).toBe(5);
    const live = codes.filter((code) => digest(code) === row?.code_hash);
    expect(live).toHaveLength(1);
    expect((await reset(t, alice, live[0] ?? '')).statusCode).toBe(204);
  });

  it('of two resets with one code at once, exactly one sets its password', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    await t.app.inject({ method: 'POST', url: FORGOT, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ school_id: 'lincoln-high', username: 'alice' }) });
    await settle(t);
    const code = await latestCode(t);
    const passwords = ['first new passphrase 111', 'second new passphrase 222'];
    const answers = await Promise.all(passwords.map((password, index) => reset(t, alice, code, password, `192.0.2.${index + 1}`)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 401]);
    const winner = passwords[answers.findIndex((answer) => answer.statusCode === 204)] ?? '';
    const loser = passwords.find((password) => password !== winner) ?? '';
    expect((await login(t, alice, winner)).statusCode).toBe(200);
    expect((await login(t, alice, loser)).statusCode).toBe(401);
    expect((await login(t, alice, PASSWORD)).statusCode).toBe(401);
    const changed = await t.services.db.selectFrom('events').select('id').where('type', '=', 'admin.password_changed').execute();
    expect(changed).toHaveLength(1);
  });

  it('10 wrong guesses from one address at once: 5 are judged, 5 are throttled', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    const answers = await Promise.all(Array.from({ length: 10 }, () => reset(t, alice, 'C'.repeat(43), 'a guessed new passphrase', '198.51.100.7')));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(5).fill(429)]);
  });
});
