/**
 * An erasure racing what writes about the same admin leaves no half-erased state: a login in
 * flight, an event recorded after (or while) the erasure commits. On PostgreSQL the erasure runs
 * on connections of its own, and the lock waits are observed in pg_stat_activity, not guessed.
 */
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { removeAdmin } from '../../../src/auth/accounts/admin-removal.js';
import type { AppContext } from '../../../src/auth/context.js';
import { recordEvent } from '../../../src/auth/events.js';
import type { Database, Db } from '../../../src/db/database.js';
import { addWebhook } from '../../../src/delivery/webhooks.js';
import { postJson, seedAdmin, useTestApps, type TestApp } from '../../helpers/app.js';
import { sealAll, verdict, withEmptyTrail } from '../../helpers/audit.js';
import { TEST_DIALECTS } from '../../helpers/database.js';
import { loginFrom, PERSON, secondPostgresConnection, tracesOf } from '../../helpers/erasure.js';
import { gate } from '../../helpers/gate.js';
import { bearer } from '../../helpers/mfa.js';

const TRAVELLING = { ...PERSON, ip: '203.0.113.199' };
const NEEDLES = [PERSON.username, PERSON.ip, TRAVELLING.ip, PERSON.userAgent];
const REF = { schoolId: 'lincoln-high', username: PERSON.username };

/** Holds every login after its password verification (the admin already read) until `release`. */
function holdLoginsAfterVerification(t: TestApp) {
  const released = gate();
  const verified = gate();
  const verify = t.services.hasher.verify.bind(t.services.hasher);
  const spy = vi.spyOn(t.services.hasher, 'verify').mockImplementation(async (hash, password) => {
    const matches = await verify(hash, password);
    verified.open();
    await released.opened;
    return matches;
  });
  onTestFinished(() => spy.mockRestore());
  return { verified: verified.opened, release: released.open };
}

/** The pid of a backend `blocker` holds up (PostgreSQL), asked until there is one: lock waits observed, not slept on. */
async function blockedBy(db: Db, blocker: number): Promise<number> {
  for (let asked = 0; asked < 2000; asked += 1) {
    const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where ${blocker}::int = any(pg_blocking_pids(pid))`.execute(db);
    if (rows[0] !== undefined) return rows[0].pid;
  }
  throw new Error(`nothing waited for backend ${blocker}`);
}

const backendPid = async (db: Db) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]?.pid ?? 0;

/**
 * A transaction on `db` that runs `take` and stays open until `release` (at the latest when the
 * test ends, whatever its outcome); `pid` is its backend.
 */
async function heldTransaction(db: Db, take: (trx: Db) => Promise<unknown>) {
  const taken = gate();
  const release = gate();
  let pid = 0;
  const done = db.transaction().execute(async (trx) => {
    pid = await backendPid(trx);
    await take(trx);
    taken.open();
    await release.opened;
  });
  onTestFinished(async () => {
    release.open();
    await done.catch(() => undefined);
  });
  await Promise.race([taken.opened, done]);
  return { pid, release: async () => (release.open(), await done) };
}

/** What every event about the admin must be once they are erased: emptied, but for the record of the erasure. */
async function expectAllErased(db: Db, adminId: string) {
  const about = await db.selectFrom('events').selectAll().where('admin_id', '=', adminId).orderBy('id').execute();
  const records = about.filter((event) => event.type === 'admin.erased');
  expect(records).toHaveLength(1);
  for (const event of about.filter((e) => e.type !== 'admin.erased')) {
    expect(event, `${event.type} ${event.id}`).toMatchObject({ username: null, ip: null, user_agent: null, detail: null, personal_salt: null, erased_at: expect.any(Number) as unknown });
  }
  expect(await tracesOf(db, NEEDLES)).toEqual([]);
  return about;
}

describe.each(TEST_DIALECTS)('erasure racing writes about the admin on %s', (dialect) => {
  const open = useTestApps(dialect);

  /** The person, signed in once; a webhook hears of every event; the erasure's own connections on PostgreSQL. */
  async function world() {
    const t = await withEmptyTrail(await open());
    await addWebhook(t.services, { url: 'https://hooks.partner.example/in' });
    const person = await seedAdmin(t.services, { username: PERSON.username });
    const first = await loginFrom(t, person, PERSON);
    expect(first.statusCode).toBe(200);
    const { id } = await t.services.db.selectFrom('admins').select('id').where('username', '=', PERSON.username).executeTakeFirstOrThrow();
    const own: Database | undefined = dialect === 'postgres' ? await secondPostgresConnection(t.services.db) : undefined;
    if (own !== undefined) onTestFinished(() => own.close());
    const eraser: Pick<AppContext, 'db' | 'clock'> = { db: own?.db ?? t.services.db, clock: t.clock };
    return { t, person, id, eraser, session: first.json<{ access_token: string; refresh_token: string }>() };
  }

  it('a login held between its password check and its session is refused, and all about the admin is erased', async () => {
    const { t, person, id, eraser, session } = await world();
    const hold = holdLoginsAfterVerification(t);
    const inFlight = loginFrom(t, person, TRAVELLING);
    await hold.verified;
    expect(await removeAdmin(eraser, REF, true)).toBe('erased');
    hold.release();

    expect((await inFlight).statusCode).toBe(401);
    const about = await expectAllErased(t.services.db, id);
    // The refused login was recorded after the erasure, stored erased.
    const record = about.find((event) => event.type === 'admin.erased');
    expect(about.filter((event) => event.type === 'login.failure' && event.id > (record?.id ?? 0))).toHaveLength(1);
    expect(await t.services.db.selectFrom('sessions').select('id').where('admin_id', '=', id).where('revoked_at', 'is', null).execute()).toEqual([]);
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: session.refresh_token })).statusCode).toBe(401);
    t.clock.advance(120);
    await sealAll(t.services);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it('an event recorded about the admin after the erasure committed is stored erased, and tells the webhook nothing personal', async () => {
    const { t, id, eraser } = await world();
    expect(await removeAdmin(eraser, REF, true)).toBe('erased');
    t.clock.advance(1);
    await recordEvent(t.services.db, t.clock, { ip: PERSON.ip, userAgent: PERSON.userAgent }, { type: 'refresh.reuse', schoolId: 'lincoln-high', username: PERSON.username, adminId: id, detail: 'late' });
    const late = await t.services.db.selectFrom('events').selectAll().where('type', '=', 'refresh.reuse').executeTakeFirstOrThrow();
    expect(late).toMatchObject({ admin_id: id, username: null, ip: null, user_agent: null, detail: null, personal_salt: null, erased_at: late.at });
    await expectAllErased(t.services.db, id);
    t.clock.advance(120);
    await sealAll(t.services);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it.runIf(dialect === 'postgres')('an event written while the erasure holds the admin waits for it and is stored erased', async () => {
    const { t, id, eraser } = await world();
    // A third connection holds one of the admin's events, so the erasure stops midway with the admin's row locked.
    const holder = await secondPostgresConnection(t.services.db);
    onTestFinished(() => holder.close());
    const [event] = await t.services.db.selectFrom('events').select('id').where('admin_id', '=', id).where('type', '=', 'login.success').execute();
    const held = await heldTransaction(holder.db, (trx) => trx.selectFrom('events').select('id').where('id', '=', event?.id ?? 0).forUpdate().execute());
    const erasing = removeAdmin(eraser, REF, true);
    const eraserPid = await blockedBy(holder.db, held.pid);
    const recording = recordEvent(t.services.db, t.clock, { ip: PERSON.ip, userAgent: PERSON.userAgent }, { type: 'refresh.reuse', schoolId: 'lincoln-high', username: PERSON.username, adminId: id });
    await blockedBy(holder.db, eraserPid);
    await held.release();
    expect(await erasing).toBe('erased');
    await recording;

    const about = await expectAllErased(t.services.db, id);
    // Written after the erasure's own update (which did not count it), stored erased by itself.
    expect(about.filter((event) => event.type === 'refresh.reuse')).toHaveLength(1);
    expect(about.find((event) => event.type === 'admin.erased')?.detail).toBe(`${about.length - 2} events erased`);
    t.clock.advance(120);
    await sealAll(t.services);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it.runIf(dialect === 'postgres')("an erasure started while an event's transaction is open waits for it and erases that event", async () => {
    const { t, id, eraser } = await world();
    const writer = await heldTransaction(t.services.db, (trx) =>
      recordEvent(trx, t.clock, { ip: TRAVELLING.ip, userAgent: PERSON.userAgent }, { type: 'login.new_address', schoolId: 'lincoln-high', username: PERSON.username, adminId: id, detail: TRAVELLING.ip }),
    );
    const erasing = removeAdmin(eraser, REF, true);
    await blockedBy(t.services.db, writer.pid);
    await writer.release();
    expect(await erasing).toBe('erased');

    const about = await expectAllErased(t.services.db, id);
    const record = about.find((event) => event.type === 'admin.erased');
    expect(record?.detail).toBe(`${about.length - 1} events erased`);
    t.clock.advance(120);
    await sealAll(t.services);
    expect(await verdict(t.services.db)).toBe('ok');
  });

  it.runIf(dialect === 'postgres')('a login inside its transaction when the erasure starts commits first, then its session ends and its events are erased', async () => {
    const { t, person, id, eraser } = await world();
    // A third connection holds the login inside its transaction (session inserted, the admin's row key-shared), at its address's row.
    const holder = await secondPostgresConnection(t.services.db);
    onTestFinished(() => holder.close());
    const held = await heldTransaction(holder.db, (trx) => sql`lock table known_client_ips in share mode`.execute(trx));
    const inFlight = loginFrom(t, person, TRAVELLING);
    const loginPid = await blockedBy(holder.db, held.pid);
    const erasing = removeAdmin(eraser, REF, true);
    await blockedBy(holder.db, loginPid);
    await held.release();

    const answer = await inFlight;
    expect(answer.statusCode).toBe(200);
    expect(await erasing).toBe('erased');
    const tokens = answer.json<{ access_token: string; refresh_token: string }>();
    expect((await postJson(t.app, '/auth/refresh', { refresh_token: tokens.refresh_token })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/admin/auth/me', headers: bearer(tokens.access_token) })).statusCode).toBe(401);
    const about = await expectAllErased(t.services.db, id);
    expect(about.map((event) => event.type)).toEqual(expect.arrayContaining(['login.success', 'login.new_address', 'admin.deleted', 'admin.erased']));
    t.clock.advance(120);
    await sealAll(t.services);
    expect(await verdict(t.services.db)).toBe('ok');
  });
});
