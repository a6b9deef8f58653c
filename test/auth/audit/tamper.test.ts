import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { chainHash, sealedView } from '../../../src/auth/audit/canonical-event.js';
import { verifyTrail } from '../../../src/auth/audit/verify-trail.js';
import type { Db } from '../../../src/db/database.js';
import { personalDigest } from '../../../src/db/event-digest.js';
import { useTestApps, type TestApp } from '../../helpers/app.js';
import { recordEvents, sealAll, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';

/** The problem `events verify` reports, or 'ok'. */
async function verdict(db: Db): Promise<string> {
  const result = await verifyTrail(db);
  return result.ok ? 'ok' : result.problem;
}

const CONTENT = ['at', 'type', 'school_id', 'username', 'admin_id', 'session_id', 'ip', 'user_agent', 'detail', 'personal_salt', 'personal_digest'] as const;

/** An event's personal fields edited as a forger would: with their digest recomputed from the stored salt. */
function withUsername<T extends { username: string | null; ip: string | null; user_agent: string | null; detail: string | null; personal_salt: string | null }>(event: T, username: string) {
  const edited = { ...event, username };
  return { ...edited, personal_digest: personalDigest(event.personal_salt ?? '', edited) };
}

/** Tampering straight in the database, as someone with database access would. */
describe.each(TEST_DIALECTS)('events verify names what was tampered with on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** Five events sealed in batches of two: checkpoints at seq 2, 4 and 5; `earlierForm`: as written before migration 018. */
  async function sealedTrail(earlierForm = false): Promise<{ t: TestApp; db: Db }> {
    const t = await withEmptyTrail(await open());
    await recordEvents(t.services, 5, (s) => t.clock.advance(s));
    if (earlierForm) await sql`update events set personal_salt = null, personal_digest = null`.execute(t.services.db);
    t.clock.advance(120);
    await sealAll(t.services, 2);
    expect(await verdict(t.services.db)).toBe('ok');
    return { t, db: t.services.db };
  }

  it('an edited field, with or without its personal digest recomputed, or in the earlier form', async () => {
    const { db } = await sealedTrail();
    await sql`update events set username = 'mallory' where seq = 3`.execute(db);
    expect(await verdict(db)).toMatch(/^event seq 3 \(id \d+, admin\.created at .*\) was edited: its personal fields no longer match their digest/);

    const other = (await sealedTrail()).db;
    const event = await other.selectFrom('events').selectAll().where('seq', '=', 3).executeTakeFirstOrThrow();
    const { username, personal_digest } = withUsername(event, 'mallory');
    await other.updateTable('events').set({ username, personal_digest }).where('id', '=', event.id).execute();
    expect(await verdict(other)).toMatch(/^event seq 3 \(id \d+, admin\.created at .*\) was edited: it no longer matches its hash/);

    const earlier = (await sealedTrail(true)).db;
    await sql`update events set username = 'mallory' where seq = 3`.execute(earlier);
    expect(await verdict(earlier)).toMatch(/^event seq 3 \(id \d+, admin\.created at .*\) was edited: it no longer matches its hash/);
  });

  it('a deleted row, in the middle or at the end', async () => {
    const { db } = await sealedTrail();
    await sql`delete from events where seq = 3`.execute(db);
    expect(await verdict(db)).toMatch(/^event seq 3 was deleted/);
    const other = (await sealedTrail()).db;
    await sql`delete from events where seq = 5`.execute(other);
    expect(await verdict(other)).toMatch(/^events seq 5 to 5 were deleted: checkpoint seq 5 covers them/);
  });

  it('a row inserted with an earlier time, before and after the sealer has sealed it', async () => {
    const { t, db } = await sealedTrail();
    const first = await db.selectFrom('events').selectAll().where('seq', '=', 1).executeTakeFirstOrThrow();
    await sql`insert into events (at, type, username) values (${first.at + 500}, 'login.success', 'mallory')`.execute(db);
    expect(await verdict(db)).toMatch(/^event id \d+ \(login\.success at .*\) was inserted afterwards: checkpoint seq 5 promised/);
    await sealAll(t.services);
    expect(await verdict(db)).toMatch(/^event seq 6 \(id \d+, login\.success at .*\) was inserted afterwards/);
  });

  it('a row inserted at the end with a correctly chained hash', async () => {
    const { t, db } = await sealedTrail();
    const last = await db.selectFrom('events').selectAll().where('seq', '=', 5).executeTakeFirstOrThrow();
    const forged = { ...withUsername(last, 'mallory'), id: last.id + 100, seq: 6, at: t.clock.now() };
    const hash = chainHash(last.hash ?? '', sealedView(forged, 6));
    await db.insertInto('events').values({ ...forged, hash }).execute();
    expect(await verdict(db)).toMatch(/^event seq 6 was inserted: sealed events end at seq 6, the last checkpoint at seq 5/);
  });

  it("two rows' contents swapped, or their places", async () => {
    const { db } = await sealedTrail();
    const [two, three] = await db.selectFrom('events').selectAll().where('seq', 'in', [2, 3]).orderBy('seq').execute();
    if (two === undefined || three === undefined) throw new Error('missing events');
    const content = (e: typeof two) => Object.fromEntries(CONTENT.map((column) => [column, e[column]]));
    await db.updateTable('events').set(content(three)).where('id', '=', two.id).execute();
    await db.updateTable('events').set(content(two)).where('id', '=', three.id).execute();
    expect(await verdict(db)).toMatch(/^event seq 2 \(id \d+, admin\.created at .*\) was edited: it no longer matches its hash/);

    const other = (await sealedTrail()).db;
    await sql`update events set seq = -seq where seq in (2, 3)`.execute(other);
    await sql`update events set seq = case when seq = -2 then 3 else 2 end where seq in (-2, -3)`.execute(other);
    expect(await verdict(other)).toMatch(/^event seq 2 \(id \d+, .*\) was reordered: it was written after the event sealed next/);
  });

  it('events rewritten with their hashes recomputed, by someone without the signing key', async () => {
    const { db } = await sealedTrail();
    const events = await db.selectFrom('events').selectAll().where('seq', '>=', 3).orderBy('seq').execute();
    let previous = (await db.selectFrom('events').select('hash').where('seq', '=', 2).executeTakeFirstOrThrow()).hash ?? '';
    for (const event of events) {
      const edited = event.seq === 3 ? withUsername(event, 'mallory') : event;
      previous = chainHash(previous, sealedView(edited, event.seq ?? 0));
      await db.updateTable('events').set({ username: edited.username, personal_digest: edited.personal_digest, hash: previous }).where('id', '=', event.id).execute();
    }
    expect(await verdict(db)).toMatch(/^the events up to checkpoint seq 4 were rewritten/);
  });

  it('personal data erased by hand, in either form, with no sealed admin.erased event recording it', async () => {
    for (const earlierForm of [false, true]) {
      const { db } = await sealedTrail(earlierForm);
      await sql`update events set username = null, ip = null, user_agent = null, detail = null, personal_salt = null, erased_at = at where seq = 3`.execute(db);
      expect(await verdict(db)).toMatch(/^event seq 3 \(id \d+, admin\.created at .*\) was edited: its personal data is gone, and no sealed admin\.erased event records that erasure/);
    }
    const marked = (await sealedTrail()).db;
    await sql`update events set erased_at = at where seq = 3`.execute(marked);
    expect(await verdict(marked)).toMatch(/^event seq 3 \(id \d+, admin\.created at .*\) was edited: it is marked erased but still holds personal data/);
  });

  it('a checkpoint edited, re-signed by another key, or deleted', async () => {
    const { db } = await sealedTrail();
    await sql`update audit_checkpoints set covers_before = covers_before + 1 where seq = 4`.execute(db);
    expect(await verdict(db)).toBe('checkpoint seq 4 was edited: its row differs from what its signature covers');

    const resigned = (await sealedTrail()).db;
    const other = await resigned.selectFrom('audit_checkpoints').select('jws').where('seq', '=', 2).executeTakeFirstOrThrow();
    await resigned.updateTable('audit_checkpoints').set({ jws: other.jws }).where('seq', '=', 4).execute();
    expect(await verdict(resigned)).toBe('checkpoint seq 4 was edited: its row differs from what its signature covers');

    const forged = (await sealedTrail()).db;
    const jws = (await forged.selectFrom('audit_checkpoints').select('jws').where('seq', '=', 4).executeTakeFirstOrThrow()).jws;
    const [header, payload] = jws.split('.');
    await forged.updateTable('audit_checkpoints').set({ jws: `${header}.${payload}.${'A'.repeat(86)}` }).where('seq', '=', 4).execute();
    expect(await verdict(forged)).toMatch(/^checkpoint seq 4: its signature does not verify with key /);

    const deleted = (await sealedTrail()).db;
    await sql`delete from audit_checkpoints where seq = 2`.execute(deleted);
    expect(await verdict(deleted)).toBe('checkpoint seq 2 was deleted: checkpoint seq 4 was signed after it');
  });
});
