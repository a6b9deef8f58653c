/** POST /password/forgot tells nothing: the same 202 for everyone, and only a recoverable admin is mailed. */
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { setAdminEnabled } from '../../../src/auth/accounts/admins.js';
import { setSchoolPasswordRecovery } from '../../../src/auth/accounts/recovery-link.js';
import { suspendSchool } from '../../../src/auth/accounts/schools.js';
import { addSsoAdmin } from '../../../src/auth/sso/links.js';
import { setSso } from '../../../src/auth/sso/settings.js';
import { FORGOT_ANSWER } from '../../../src/http/routes/sessions/password-recovery.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { FORGOT, adminWithAddress, forgot, passwordRecoveryRows, recoveryMessages, settle, stableHeaders, useRecoveryApps, type RecoveryApp, type Who } from './recovery-world.js';

const IDP = { provider: 'oidc', issuer: 'https://idp.district.example', clientId: 'school-auth', clientSecret: 'idp-secret' };

/** One admin or made-up name for each way a request for a code can end, each with an address unless the case is not having one. */
async function everyCase(t: RecoveryApp) {
  const withAddress = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
  await adminWithAddress(t, 'noaddress', undefined);
  const disabled = await adminWithAddress(t, 'disabled', 'disabled@lincoln-high.example');
  await setAdminEnabled(t.services, disabled.ref, false);

  await adminWithAddress(t, 'helper', undefined, 'sso-school');
  await setSso(t.services, 'sso-school', IDP);
  await addSsoAdmin(t.services, { schoolId: 'sso-school', username: 'carol' }, 'carol@district.example');
  await setAdminEmail(t.services, { schoolId: 'sso-school', username: 'carol' }, 'carol@district.example');

  await adminWithAddress(t, 'dan', 'dan@sso-only.example', 'sso-only-school');
  await setSso(t.services, 'sso-only-school', { ...IDP, passwordLogin: 'off' });

  await adminWithAddress(t, 'erin', 'erin@no-recovery.example', 'no-recovery-school');
  await setSchoolPasswordRecovery(t.services, 'no-recovery-school', false);

  await adminWithAddress(t, 'frank', 'frank@suspended.example', 'suspended-school');
  await suspendSchool(t.services, 'suspended-school');

  const cases: Record<string, Who> = {
    '(a) an admin with an address': { schoolId: 'lincoln-high', username: 'alice' },
    '(b) an unknown username': { schoolId: 'lincoln-high', username: 'nobody' },
    '(c) an unknown school': { schoolId: 'no-such-school', username: 'alice' },
    '(d) an admin without an address': { schoolId: 'lincoln-high', username: 'noaddress' },
    '(e) a disabled admin': { schoolId: 'lincoln-high', username: 'disabled' },
    '(f) an admin who signs in only through single sign-on': { schoolId: 'sso-school', username: 'carol' },
    '(g) an admin of a school whose password login is off': { schoolId: 'sso-only-school', username: 'dan' },
    '(h) an admin of a school with recovery off': { schoolId: 'no-recovery-school', username: 'erin' },
    '(i) an admin of a suspended school': { schoolId: 'suspended-school', username: 'frank' },
  };
  return { withAddress, cases };
}

describe.each(TEST_DIALECTS)('no account enumeration through /password/forgot on %s', (dialect) => {
  const open = useRecoveryApps(dialect);

  it('answers every case with the identical 202, and mails only the admin who can recover', async () => {
    const t = await open();
    const { withAddress, cases } = await everyCase(t);
    const eventsBefore = await t.services.db.selectFrom('events').select('id').execute();
    const outboxBefore = await t.services.db.selectFrom('outbox').select('id').execute();

    const answers = new Map<string, { status: number; body: string; headers: Record<string, unknown> }>();
    for (const [name, who] of Object.entries(cases)) {
      const response = await forgot(t, who);
      answers.set(name, { status: response.statusCode, body: response.body, headers: stableHeaders(response) });
    }
    const first = answers.get('(a) an admin with an address');
    expect(first?.status).toBe(202);
    expect(JSON.parse(first?.body ?? '')).toEqual(FORGOT_ANSWER);
    expect(first?.headers['content-type']).toMatch(/^application\/json/);
    for (const [name, answer] of answers) expect(answer, name).toEqual(first);

    // Every background task is done (settled): exactly one code, one e-mail and one event were written, all for (a).
    expect((await passwordRecoveryRows(t)).map((row) => row.admin_id)).toEqual([withAddress.id]);
    const mailed = await recoveryMessages(t);
    expect(mailed.map((row) => `${row.channel} ${row.target}`)).toEqual([`email ${withAddress.id}`]);
    const newOutbox = await t.services.db.selectFrom('outbox').select(['type', 'target']).where('id', 'not in', [...outboxBefore.map((row) => row.id), '']).execute();
    expect(newOutbox).toEqual([{ type: 'password.recovery', target: withAddress.id }]);
    const newEvents = await t.services.db
      .selectFrom('events')
      .select(['type', 'admin_id'])
      .where('id', 'not in', [...eventsBefore.map((row) => row.id), -1])
      .execute();
    expect(newEvents).toEqual([{ type: 'admin.password_recovery_requested', admin_id: withAddress.id }]);
  });

  it('answers before the work is done: the 202 arrives while the code cannot be written yet', async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    let answer: LightMyRequestResponse | undefined;
    // Held by this transaction: PostgreSQL's table of codes, SQLite's one connection.
    await t.services.db.transaction().execute(async (trx) => {
      if (dialect === 'postgres') await sql`lock table password_recoveries in access exclusive mode`.execute(trx);
      const request = t.app.inject({ method: 'POST', url: FORGOT, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ school_id: alice.schoolId, username: 'alice' }) });
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer while the database was held: the answer waits for the work')), 5000);
      });
      answer = await Promise.race([request, deadline]).finally(() => clearTimeout(timer));
      expect(await trx.selectFrom('password_recoveries').selectAll().execute()).toEqual([]);
    });
    expect(answer?.statusCode).toBe(202);
    await settle(t);
    expect((await passwordRecoveryRows(t)).map((row) => row.admin_id)).toEqual([alice.id]);
  });

  it('a request for a code takes about as long to answer for a real admin as for an unknown one: the work comes after', { timeout: 60_000 }, async () => {
    const t = await open();
    const alice = await adminWithAddress(t, 'alice', 'alice@lincoln-high.example');
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? Number.NaN;
    const timed = async (who: Who) => {
      const started = performance.now();
      const response = await t.app.inject({
        method: 'POST',
        url: FORGOT,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ school_id: who.schoolId, username: who.username }),
      });
      const elapsed = performance.now() - started;
      expect(response.statusCode).toBe(202);
      // The next request is timed once this one's work is over, so that work slows neither.
      await settle(t);
      return elapsed;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < 9; round += 1) {
      // A new hour each round: neither the per-address nor the per-admin limit cuts the work short.
      t.clock.advance(3601);
      known.push(await timed(alice));
      unknown.push(await timed({ schoolId: alice.schoolId, username: 'nobody' }));
    }
    // Every round of (a) did the whole work: a code mailed each time.
    expect(await recoveryMessages(t)).toHaveLength(9);
    expect(median(known)).toBeLessThan(median(unknown) * 3 + 5);
    expect(median(unknown)).toBeLessThan(median(known) * 3 + 5);
  });
});
