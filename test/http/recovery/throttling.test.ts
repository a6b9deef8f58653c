/** Guesses at codes and requests for codes are limited per client address; nobody can lock the owner out. */
import { describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from '../../helpers/database.js';
import {
  INVALID_CODE_BODY,
  NEW_PASSWORD,
  adminWithAddress,
  forgot,
  latestCode,
  login,
  recoveryMessages,
  reset,
  useRecoveryApps,
  type RecoveryApp,
} from './recovery-world.js';

const ATTACKER = '198.51.100.66';
const OWNER = '203.0.113.10';
const WRONG = 'B'.repeat(43);
const THROTTLED = { status: 429, body: '{"detail":"Too many attempts. Try again later."}', retryAfter: '900' };

function outcome(response: Awaited<ReturnType<typeof reset>>) {
  return { status: response.statusCode, body: response.body, retryAfter: response.headers['retry-after'] };
}

describe.each(TEST_DIALECTS)('throttling of password recovery on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  async function aliceWithCode(t: RecoveryApp) {
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    expect((await forgot(t, alice, OWNER)).statusCode).toBe(202);
    return { alice, code: await latestCode(t) };
  }

  async function fiveWrongGuesses(t: RecoveryApp, alice: { schoolId: string; username: string }) {
    for (let guess = 0; guess < 5; guess += 1) {
      const response = await reset(t, alice, WRONG, NEW_PASSWORD, ATTACKER);
      expect(response.statusCode, `guess ${guess + 1}`).toBe(401);
      expect(response.body).toBe(INVALID_CODE_BODY);
    }
  }

  it('after 5 wrong guesses from an address its 6th is a 429 even with the right code, while the owner elsewhere still recovers', async () => {
    const t = await open();
    const { alice, code } = await aliceWithCode(t);
    await fiveWrongGuesses(t, alice);
    expect(outcome(await reset(t, alice, code, NEW_PASSWORD, ATTACKER))).toEqual(THROTTLED);
    expect(outcome(await reset(t, alice, WRONG, NEW_PASSWORD, ATTACKER))).toEqual(THROTTLED);
    // The refused guesses spent nothing: the owner's code, from the owner's address, works.
    expect((await reset(t, alice, code, NEW_PASSWORD, OWNER)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('answers the 401 and the 429 that /openapi.json documents for /password/reset', async () => {
    const t = await open();
    const { alice } = await aliceWithCode(t);
    await fiveWrongGuesses(t, alice);
    const throttled = await reset(t, alice, WRONG, NEW_PASSWORD, ATTACKER);
    expect(throttled.statusCode).toBe(429);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
    const documented = (status: number) => {
      const response = doc.paths['/admin/auth/password/reset']?.post?.responses[String(status)] as { content: { 'application/json': { schema: { properties: { detail: { examples: string[] } } } } } };
      return response.content['application/json'].schema.properties.detail.examples;
    };
    expect(documented(429)).toEqual([throttled.json<{ detail: string }>().detail]);
    expect(documented(401)).toEqual([JSON.parse(INVALID_CODE_BODY).detail]);
  });

  it('after the 15-minute window the address may guess again, and its right code works', async () => {
    const t = await open({ PASSWORD_RECOVERY_TTL: '3600' });
    const { alice, code } = await aliceWithCode(t);
    await fiveWrongGuesses(t, alice);
    t.clock.advance(899);
    expect(outcome(await reset(t, alice, code, NEW_PASSWORD, ATTACKER))).toEqual(THROTTLED);
    t.clock.advance(1);
    expect((await reset(t, alice, code, NEW_PASSWORD, ATTACKER)).statusCode).toBe(204);
    expect((await login(t, alice, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('one address may guess 20 times in 15 minutes, whatever accounts it names', async () => {
    const t = await open();
    const { alice, code } = await aliceWithCode(t);
    // 4 guesses at each of 5 made-up accounts: under each account's 5, 20 for the address.
    for (let guess = 0; guess < 20; guess += 1) {
      const response = await reset(t, { schoolId: 'lincoln-high', username: `ghost${guess % 5}` }, WRONG, NEW_PASSWORD, ATTACKER);
      expect(response.statusCode, `guess ${guess + 1}`).toBe(401);
    }
    expect(outcome(await reset(t, alice, code, NEW_PASSWORD, ATTACKER))).toEqual(THROTTLED);
    expect((await reset(t, alice, code, NEW_PASSWORD, OWNER)).statusCode).toBe(204);
  });

  it('mails nothing for the 21st request from one address in 15 minutes (still the same 202), again after the window', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    const first = await forgot(t, { schoolId: 'lincoln-high', username: 'ghost' }, ATTACKER);
    for (let request = 2; request <= 20; request += 1) {
      expect((await forgot(t, { schoolId: 'lincoln-high', username: `ghost${request}` }, ATTACKER)).statusCode).toBe(202);
    }
    const refused = await forgot(t, alice, ATTACKER);
    expect(refused.statusCode).toBe(202);
    expect(refused.body).toBe(first.body);
    expect(await recoveryMessages(t)).toHaveLength(0);

    // The same request from another address is mailed: it was the address that was refused.
    await forgot(t, alice, OWNER);
    expect(await recoveryMessages(t)).toHaveLength(1);
    t.clock.advance(899);
    await forgot(t, alice, ATTACKER);
    expect(await recoveryMessages(t)).toHaveLength(1);
    t.clock.advance(1);
    await forgot(t, alice, ATTACKER);
    const mailed = await recoveryMessages(t);
    expect(mailed).toHaveLength(2);
    expect(JSON.parse(mailed[1]?.payload ?? '{}')).toMatchObject({ data: { ip: ATTACKER } });
  });
});
