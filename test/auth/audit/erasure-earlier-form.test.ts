/**
 * An upgraded installation: events written before migration 018 (the earlier form: personal
 * fields in the clear, no salt, no digest) seal and verify as they always did, survive the erasure
 * of their admin (the `admin.erased` event lists their seqs), and any other earlier-form event
 * emptied is named.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { removeAdmin } from '../../../src/auth/accounts/admin-removal.js';
import type { SealedCheckpoint } from '../../../src/auth/audit/checkpoint-signature.js';
import type { Db } from '../../../src/db/database.js';
import { seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { loginFrom, OTHER_CLIENT, PERSON, sealShipping, shippedLog, tracesOf, type Client } from '../../helpers/erasure.js';

/** An event as a version before migration 018 wrote it. */
async function writeEarlierForm(t: TestApp, event: { type: string; adminId: string; username: string; client: Client; detail?: string }): Promise<number> {
  const row = await t.services.db
    .insertInto('events')
    .values({
      at: t.clock.now(),
      type: event.type,
      school_id: 'lincoln-high',
      username: event.username,
      admin_id: event.adminId,
      session_id: null,
      ip: event.client.ip,
      user_agent: event.client.userAgent,
      detail: event.detail ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const idOf = async (db: Db, username: string) => (await db.selectFrom('admins').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id;
const byId = (db: Db, id: number) => db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe.each(TEST_DIALECTS)('erasure on an upgraded installation (%s)', (dialect) => {
  const open = useTestApps(dialect);

  /**
   * The person and bob with earlier-form events, sealed; digest-form sign-ins, sealed; one more
   * earlier-form event of the person still unsealed when they are erased; sealed at last.
   */
  async function upgradedTrail() {
    const t = await withEmptyTrail(await open());
    const { db } = t.services;
    const shipped: SealedCheckpoint[] = [];
    const person = await seedAdmin(t.services, { username: PERSON.username });
    const bob = await seedAdmin(t.services, { username: 'bob' });
    const [personId, bobId] = [await idOf(db, PERSON.username), await idOf(db, 'bob')];
    const earlier = {
      personSuccess: await writeEarlierForm(t, { type: 'login.success', adminId: personId, username: PERSON.username, client: PERSON }),
      bobSuccess: await writeEarlierForm(t, { type: 'login.success', adminId: bobId, username: 'bob', client: OTHER_CLIENT }),
      personFailure: await writeEarlierForm(t, { type: 'login.failure', adminId: personId, username: PERSON.username, client: PERSON, detail: 'wrong_password' }),
      bobFailure: await writeEarlierForm(t, { type: 'login.failure', adminId: bobId, username: 'bob', client: OTHER_CLIENT, detail: 'wrong_password' }),
    };
    t.clock.advance(120);
    await sealShipping(t.services, shipped);
    expect(await verdict(db)).toBe('ok');
    expect((await byId(db, earlier.personSuccess)).personal_digest).toBeNull();

    t.clock.advance(120);
    expect((await loginFrom(t, person, PERSON)).statusCode).toBe(200);
    expect((await loginFrom(t, bob, OTHER_CLIENT)).statusCode).toBe(200);
    t.clock.advance(120);
    await sealShipping(t.services, shipped);
    const unsealed = await writeEarlierForm(t, { type: 'login.failure', adminId: personId, username: PERSON.username, client: PERSON, detail: 'wrong_password' });
    t.clock.advance(1);
    expect(await removeAdmin(t.services, { schoolId: person.schoolId, username: PERSON.username }, true)).toBe('erased');
    t.clock.advance(120);
    await sealShipping(t.services, shipped);
    return { t, db, personId, bobId, earlier, unsealed, shipped };
  }

  it('earlier-form events seal and verify; after their admin is erased the record lists their seqs and the trail verifies', async () => {
    const { db, personId, earlier, unsealed, shipped } = await upgradedTrail();
    const seqs = [(await byId(db, earlier.personSuccess)).seq, (await byId(db, earlier.personFailure)).seq];
    const about = await db.selectFrom('events').selectAll().where('admin_id', '=', personId).orderBy('seq').execute();
    const record = about.find((event) => event.type === 'admin.erased');
    const erased = about.filter((event) => event.erased_at !== null);
    // The record may add more after the list (what it commits to); the list is exactly theirs.
    expect(record?.detail).toMatch(new RegExp(`^${erased.length} events erased; earlier-form seqs ${seqs.join(',')}(;|$)`));
    expect(erased.length).toBe(about.length - 1);
    for (const event of erased) expect(event).toMatchObject({ username: null, ip: null, user_agent: null, detail: null, personal_salt: null });
    // Earlier-form events keep their form (and their stored hash); the one still unsealed was given a digest first.
    expect((await byId(db, earlier.personSuccess)).personal_digest).toBeNull();
    const late = await byId(db, unsealed);
    expect(late.personal_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(late.seq).toBeGreaterThan(seqs[1] ?? 0);
    // Bob's earlier-form events are untouched.
    expect((await byId(db, earlier.bobSuccess)).username).toBe('bob');
    expect(await tracesOf(db, [PERSON.username, PERSON.ip, PERSON.userAgent])).toEqual([]);

    expect(await verdict(db)).toBe('ok');
    const log = shippedLog(shipped);
    onTestFinished(log.remove);
    expect(await verdict(db, log.file)).toBe('ok');
  });

  const emptied = { username: null, ip: null, user_agent: null, detail: null, personal_salt: null };

  it("another admin's earlier-form event emptied and marked erased is named; emptied alone too", async () => {
    const marked = await upgradedTrail();
    const event = await byId(marked.db, marked.earlier.bobFailure);
    await marked.db.updateTable('events').set({ ...emptied, erased_at: event.at }).where('id', '=', event.id).execute();
    expect(await verdict(marked.db)).toMatch(
      new RegExp(`^event seq ${event.seq} \\(id ${event.id}, login\\.failure at \\S+\\) was edited: its personal data is gone, and no sealed admin\\.erased event records that erasure`),
    );

    const unmarked = await upgradedTrail();
    const other = await byId(unmarked.db, unmarked.earlier.bobSuccess);
    await unmarked.db.updateTable('events').set(emptied).where('id', '=', other.id).execute();
    expect(await verdict(unmarked.db)).toMatch(new RegExp(`^event seq ${other.seq} \\(id ${other.id}, login\\.success at \\S+\\) was edited: it no longer matches its hash`));
  });

  it("the person's erased earlier-form event with data put back, or its stored hash changed, is named", async () => {
    const restored = await upgradedTrail();
    const event = await byId(restored.db, restored.earlier.personFailure);
    await restored.db.updateTable('events').set({ username: PERSON.username }).where('id', '=', event.id).execute();
    expect(await verdict(restored.db)).toMatch(new RegExp(`^event seq ${event.seq} \\(id ${event.id}, login\\.failure at \\S+\\) was edited: it is marked erased but still holds personal data`));

    // Its hash is taken as stored, and the next event chains from it.
    const rehashed = await upgradedTrail();
    const first = await byId(rehashed.db, rehashed.earlier.personSuccess);
    await rehashed.db.updateTable('events').set({ hash: 'f'.repeat(64) }).where('id', '=', first.id).execute();
    expect(await verdict(rehashed.db)).toMatch(new RegExp(`^event seq ${(first.seq ?? 0) + 1} \\(id \\d+, login\\.success at \\S+\\) was edited: it no longer matches its hash`));
  });
});
