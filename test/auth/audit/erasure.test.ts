/**
 * Erasure keeps a trail that proves itself (DESIGN.md §11): after one admin among several is
 * erased, `events verify` passes alone and against the checkpoints shipped before, and still
 * names every edit of what is left.
 */
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { removeAdmin } from '../../../src/auth/accounts/admin-removal.js';
import { setAdminEmail } from '../../../src/auth/accounts/admin-email.js';
import { setSchoolPasswordRecovery } from '../../../src/auth/accounts/recovery-link.js';
import { requestPasswordRecovery } from '../../../src/auth/accounts/recovery-request.js';
import { chainHash, GENESIS_HASH, sealedView } from '../../../src/auth/audit/canonical-event.js';
import type { SealedCheckpoint } from '../../../src/auth/audit/checkpoint-signature.js';
import { sealedEventLines } from '../../../src/auth/audit/sealed-stream.js';
import type { Db } from '../../../src/db/database.js';
import type { AuditEvent } from '../../../src/db/queries/events.js';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { adminWithTotp } from '../../helpers/mfa.js';
import { loginFrom, OTHER_CLIENT, PERSON, sealShipping, shippedLog, tracesOf } from '../../helpers/erasure.js';

/** The person's second address: a sign-in from it is a new address (an event, an e-mail, a webhook). */
const TRAVELLING = { ...PERSON, ip: '203.0.113.199' };
const NEEDLES = [PERSON.username, PERSON.email, PERSON.ip, TRAVELLING.ip, PERSON.userAgent];

async function exported(db: Db): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  for await (const line of sealedEventLines(db, { afterSeq: 0 })) lines.push(JSON.parse(line) as Record<string, unknown>);
  return lines;
}

/** The chain an export spells, hashed again from its lines alone. */
function rehash(lines: readonly Record<string, unknown>[]): string {
  let hash = GENESIS_HASH;
  for (const line of lines) {
    const event = { personal_digest: null, ...line, ...('personal' in line ? { personal_digest: line.personal } : {}) } as unknown as AuditEvent;
    hash = chainHash(hash, sealedView(event, Number(line.seq)));
    expect(hash, `seq ${String(line.seq)}`).toBe(line.hash);
  }
  return hash;
}

describe.each(TEST_DIALECTS)('erasure and events verify on %s', (dialect) => {
  const open = useTestApps(dialect);

  /**
   * The person, bob and carol sign in (a webhook hears of it); sealed; more sign-ins; sealed; the
   * export and the shipped checkpoints kept; the person erased; carol again; sealed.
   */
  async function erasedTrail() {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    const shipped: SealedCheckpoint[] = [];
    await addWebhook(t.services, { url: 'https://hooks.partner.example/in' });
    const person = await seedAdmin(t.services, { username: PERSON.username });
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const carol = await seedAdmin(t.services, { username: 'carol' });
    await setAdminEmail(t.services, person, PERSON.email);
    expect((await loginFrom(t, person, PERSON, 'not the password at all')).statusCode).toBe(401);
    expect((await loginFrom(t, person, PERSON)).statusCode).toBe(200);
    expect((await loginFrom(t, bob, OTHER_CLIENT)).statusCode).toBe(200);
    // Two minutes between phases, so that each checkpoint's promise (covers_before) covers the phase before.
    t.clock.advance(120);
    await sealShipping(t.services, shipped);
    t.clock.advance(120);
    expect((await loginFrom(t, person, TRAVELLING)).statusCode).toBe(200);
    expect((await loginFrom(t, carol, OTHER_CLIENT)).statusCode).toBe(200);
    expect((await loginFrom(t, bob, OTHER_CLIENT, 'not bob password')).statusCode).toBe(401);
    await sealShipping(t.services, shipped);
    expect(shipped.map((checkpoint) => checkpoint.events)).toHaveLength(2);
    const before = await exported(db);
    const { id: personId } = await db.selectFrom('admins').select('id').where('username', '=', PERSON.username).executeTakeFirstOrThrow();
    t.clock.advance(120);
    expect(await removeAdmin(t.services, { schoolId: person.schoolId, username: PERSON.username }, true)).toBe('erased');
    expect((await loginFrom(t, carol, OTHER_CLIENT)).statusCode).toBe(200);
    t.clock.advance(120);
    await sealShipping(t.services, shipped);
    const events = await db.selectFrom('events').selectAll().orderBy('seq').execute();
    const one = (where: (event: AuditEvent) => boolean) => {
      const found = events.find(where);
      if (found === undefined) throw new Error('no such event');
      return found;
    };
    const bobId = one((event) => event.username === 'bob').admin_id;
    return { t, db, personId, bobId, before, shipped, events, one };
  }

  it("after one admin's erasure the trail verifies, alone and against the checkpoints and export taken before", async () => {
    const { db, personId, before: exportedBefore, shipped, events } = await erasedTrail();
    const about = events.filter((event) => event.admin_id === personId);
    const record = about.find((event) => event.type === 'admin.erased');
    const erased = about.filter((event) => event !== record);
    expect(erased.map((event) => event.type)).toEqual(
      expect.arrayContaining(['admin.created', 'admin.email_changed', 'login.failure', 'login.success', 'login.new_address', 'admin.deleted']),
    );
    for (const event of erased) {
      expect(event).toMatchObject({ username: null, ip: null, user_agent: null, detail: null, personal_salt: null, erased_at: expect.any(Number) as unknown });
      expect(event.personal_digest).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(record).toMatchObject({ detail: `${erased.length} events erased`, erased_at: null, seq: expect.any(Number) as unknown });
    // The rest is as it was written.
    expect(events.filter((event) => event.username === 'carol' && event.type === 'login.success')).toHaveLength(2);
    expect(events.every((event) => event.admin_id === personId || event.erased_at === null)).toBe(true);

    expect(await verdict(db)).toBe('ok');
    // Against the checkpoints shipped before the erasure alone, and with the one after.
    const before = shippedLog(shipped.slice(0, 2));
    const all = shippedLog(shipped);
    onTestFinished(() => (before.remove(), all.remove()));
    expect(await verdict(db, before.file)).toBe('ok');
    expect(await verdict(db, all.file)).toBe('ok');

    // The export taken before re-hashes to the checkpoint signed then, and every seq keeps its hash.
    expect(rehash(exportedBefore)).toBe(shipped[1]?.hash);
    const after = await exported(db);
    expect(after.slice(0, exportedBefore.length).map((line) => [line.seq, line.hash])).toEqual(exportedBefore.map((line) => [line.seq, line.hash]));
    expect(rehash(after)).toBe(shipped.at(-1)?.hash);
    const erasedLine = after.find((line) => line.erased === true);
    expect(erasedLine).toMatchObject({ username: null, ip: null, user_agent: null, detail: null, personal_salt: null, admin_id: personId });
    expect(JSON.stringify(exportedBefore).includes(PERSON.ip)).toBe(true);
  });

  it('after the erasure nothing of the person is readable in any column of any table', async () => {
    const t = await withEmptyTrail(await open({ PASSWORD_RECOVERY_URL: 'https://admin.lincoln-high.example/reset' }));
    const { db } = t.services;
    await personActivity(t);
    // Before: the search finds them everywhere (so it can fail).
    const before = await tracesOf(db, NEEDLES);
    for (const where of ['admins.username', 'admin_emails.address', 'events.username', 'events.ip', 'events.user_agent', 'events.detail', 'sessions.ip', 'sessions.user_agent', 'outbox.payload', 'known_client_ips.ip']) {
      expect(before.some((found) => found.startsWith(`${where}: `)), where).toBe(true);
    }
    expect(await removeAdmin(t.services, { schoolId: 'lincoln-high', username: PERSON.username }, true)).toBe('erased');
    expect(await tracesOf(db, NEEDLES)).toEqual([]);
    t.clock.advance(120);
    await sealShipping(t.services, []);
    expect(await verdict(db)).toBe('ok');
  });

  /**
   * What the person leaves: an address, sign-ins from two addresses (events, sessions, a webhook
   * and an e-mail about the new one), a recovery code asked for, a second factor, and being
   * throttled for their own typing (refused before any lookup of the account).
   */
  async function personActivity(t: TestApp): Promise<void> {
    await addWebhook(t.services, { url: 'https://hooks.partner.example/in' });
    const person = await seedAdmin(t.services, { username: PERSON.username });
    await seedAdmin(t.services, { username: 'bob' });
    await setAdminEmail(t.services, person, PERSON.email);
    await setSchoolPasswordRecovery(t.services, person.schoolId, true);
    expect((await loginFrom(t, person, PERSON)).statusCode).toBe(200);
    t.clock.advance(120);
    await sealShipping(t.services, []);
    expect((await loginFrom(t, person, TRAVELLING)).statusCode).toBe(200);
    await requestPasswordRecovery(t.services, { schoolId: person.schoolId, username: PERSON.username }, { ip: PERSON.ip, userAgent: PERSON.userAgent });
    await adminWithTotp(t, person);
    expect((await loginFrom(t, person, PERSON)).statusCode).toBe(403);
    const answers: number[] = [];
    for (let attempt = 0; attempt < 7; attempt += 1) answers.push((await loginFrom(t, person, PERSON, `wrong password ${attempt}`)).statusCode);
    expect(answers).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(await t.services.db.selectFrom('events').select('type').where('type', '=', 'login.throttled').execute()).toHaveLength(1);
  }

  type Trail = Awaited<ReturnType<typeof erasedTrail>>;
  const named = (event: AuditEvent) => `^event seq ${event.seq} \\(id ${event.id}, ${event.type.replace('.', '\\.')} at \\S+\\)`;
  const emptied = { username: null, ip: null, user_agent: null, detail: null, personal_salt: null };

  /** Each tamper, done to the erased trail; what verify must say. */
  const TAMPERS: Record<string, (trail: Trail) => Promise<RegExp>> = {
    "another admin's event, a sealed field edited": async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.success');
      await db.updateTable('events').set({ session_id: 'someone-else' }).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: it no longer matches its hash`);
    },
    "another admin's event, a personal field edited": async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.failure');
      await db.updateTable('events').set({ ip: '192.0.2.250' }).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: its personal fields no longer match their digest`);
    },
    'an event deleted': async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.failure');
      await db.deleteFrom('events').where('id', '=', event.id).execute();
      return new RegExp(`^event seq ${event.seq} was deleted`);
    },
    'an event inserted': async ({ db, one }) => {
      const first = one((e) => e.seq === 1);
      await sql`insert into events (at, type, username) values (${first.at + 1}, 'login.success', 'mallory')`.execute(db);
      return /^event id \d+ \(login\.success at \S+\) was inserted afterwards/;
    },
    'two events reordered': async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.failure');
      const seq = event.seq ?? 0;
      await sql`update events set seq = -seq where seq in (${seq - 1}, ${seq})`.execute(db);
      await sql`update events set seq = case when seq = ${sql.lit(-seq)} then ${sql.lit(seq - 1)} else ${sql.lit(seq)} end where seq < 0`.execute(db);
      return new RegExp(`^event seq ${seq - 1} \\(id \\d+, .*\\) was reordered`);
    },
    "an erased event's type edited": async ({ db, one, personId }) => {
      const event = one((e) => e.admin_id === personId && e.type === 'login.failure');
      await db.updateTable('events').set({ type: 'login.success' }).where('id', '=', event.id).execute();
      return new RegExp(`^event seq ${event.seq} \\(id ${event.id}, login\\.success at \\S+\\) was edited: it no longer matches its hash`);
    },
    "an erased event's time edited": async ({ db, one, personId }) => {
      const event = one((e) => e.admin_id === personId && e.type === 'login.new_address');
      await db.updateTable('events').set({ at: event.at - 1000 }).where('id', '=', event.id).execute();
      return new RegExp(`^event seq ${event.seq} \\(id ${event.id}, login\\.new_address at \\S+\\) was edited: it no longer matches its hash`);
    },
    'personal data put back into an erased event': async ({ db, one, personId }) => {
      const event = one((e) => e.admin_id === personId && e.type === 'login.success');
      await db.updateTable('events').set({ username: PERSON.username, ip: PERSON.ip }).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: it is marked erased but still holds personal data`);
    },
    'personal data put back and the mark removed': async ({ db, one, personId }) => {
      const event = one((e) => e.admin_id === personId && e.type === 'login.success');
      await db.updateTable('events').set({ username: PERSON.username, ip: PERSON.ip, erased_at: null }).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: its personal fields no longer match their digest`);
    },
    "another admin's event emptied and marked erased": async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.success');
      await db.updateTable('events').set({ ...emptied, erased_at: event.at }).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: its personal data is gone, and no sealed admin\\.erased event records that erasure`);
    },
    "another admin's event emptied, not marked": async ({ db, one, bobId }) => {
      const event = one((e) => e.admin_id === bobId && e.type === 'login.success');
      await db.updateTable('events').set(emptied).where('id', '=', event.id).execute();
      return new RegExp(`${named(event)} was edited: its personal fields no longer match their digest`);
    },
    'the admin.erased record edited': async ({ db, one }) => {
      const record = one((e) => e.type === 'admin.erased');
      await db.updateTable('events').set({ detail: '1 events erased' }).where('id', '=', record.id).execute();
      return new RegExp(`${named(record)} was edited: its personal fields no longer match their digest`);
    },
    'the admin.erased record made to name another admin': async ({ db, one, bobId }) => {
      const record = one((e) => e.type === 'admin.erased');
      await db.updateTable('events').set({ admin_id: bobId }).where('id', '=', record.id).execute();
      return new RegExp(`${named(record)} was edited: it no longer matches its hash`);
    },
    'the admin.erased record deleted': async ({ db, one }) => {
      const record = one((e) => e.type === 'admin.erased');
      await db.deleteFrom('events').where('id', '=', record.id).execute();
      return new RegExp(`^event seq ${record.seq} was deleted`);
    },
    'the admin.erased record emptied and marked erased': async ({ db, one, personId }) => {
      const record = one((e) => e.type === 'admin.erased');
      await db.updateTable('events').set({ ...emptied, erased_at: record.at }).where('id', '=', record.id).execute();
      // The first of the erased events is then the first one no record covers.
      const first = one((e) => e.admin_id === personId);
      return new RegExp(`${named(first)} was edited: its personal data is gone, and no sealed admin\\.erased event records that erasure`);
    },
  };

  it.each(Object.keys(TAMPERS))('after an erasure, verify still names: %s', async (name) => {
    const trail = await erasedTrail();
    expect(await verdict(trail.db)).toBe('ok');
    const expected = await TAMPERS[name]!(trail);
    expect(await verdict(trail.db)).toMatch(expected);
  });
});
