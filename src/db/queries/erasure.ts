import { dialectOf, type Db } from '../database.js';
import { personalDigest } from '../event-digest.js';

/** The type of the event that records an erasure; never itself erased. */
const ERASURE_TYPE = 'admin.erased';

/** Locks the admin's row until the transaction ends (PostgreSQL; SQLite's writer holds the whole file). */
export async function lockAdmin(db: Db, adminId: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await db.selectFrom('admins').select('id').where('id', '=', adminId).forUpdate().execute();
}

/**
 * Gives the admin's events still unsealed and written before migration 018 a salt and a personal
 * digest (`salts`: one per event, from the caller's CSPRNG), so they are sealed in the form that
 * erasure leaves verifiable.
 */
export async function digestUnsealedEvents(db: Db, adminId: string, salt: () => string): Promise<void> {
  const events = await db
    .selectFrom('events')
    .select(['id', 'username', 'ip', 'user_agent', 'detail'])
    .where('admin_id', '=', adminId)
    .where('seq', 'is', null)
    .where('personal_digest', 'is', null)
    .execute();
  for (const event of events) {
    const personal_salt = salt();
    await db.updateTable('events').set({ personal_salt, personal_digest: personalDigest(personal_salt, event) }).where('id', '=', event.id).execute();
  }
}

/** The admin's sealed events of the earlier form (no digest), in seq order: the erasure record commits to them. */
export function earlierFormEvents(db: Db, adminId: string) {
  return db
    .selectFrom('events')
    .select(['id', 'seq', 'at', 'type', 'school_id', 'admin_id', 'session_id'])
    .where('admin_id', '=', adminId)
    .where('personal_digest', 'is', null)
    .where('seq', 'is not', null)
    .where('erased_at', 'is', null)
    .orderBy('seq')
    .$narrowType<{ seq: number }>()
    .execute();
}

/** The hash the event sealed at `seq` follows: the event before it, or the checkpoint prune anchored the chain at. */
export async function hashBefore(db: Db, seq: number): Promise<string | undefined> {
  const event = await db.selectFrom('events').select('hash').where('seq', '=', seq - 1).executeTakeFirst();
  if (event?.hash) return event.hash;
  const checkpoint = await db.selectFrom('audit_checkpoints').select('hash').where('seq', '=', seq - 1).executeTakeFirst();
  return checkpoint?.hash;
}

/** Erases the personal fields (and their salt) of every event about the admin; how many. */
export async function eraseEvents(db: Db, adminId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('events')
    .set({ username: null, ip: null, user_agent: null, detail: null, personal_salt: null, erased_at: now })
    .where('admin_id', '=', adminId)
    .where('erased_at', 'is', null)
    .where('type', '<>', ERASURE_TYPE)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The client addresses and user agents of the admin's sessions, kept until prune. */
export async function eraseSessionClients(db: Db, adminId: string): Promise<void> {
  await db.updateTable('sessions').set({ ip: null, user_agent: null }).where('admin_id', '=', adminId).execute();
}

/** The personal fields of every notification about the admin, sent or waiting; the rest is kept. */
export async function eraseNotifications(db: Db, adminId: string): Promise<void> {
  const messages = await db.selectFrom('outbox').select(['id', 'payload']).where('payload', 'like', `%"admin_id":${JSON.stringify(adminId)}%`).execute();
  for (const message of messages) {
    const payload = JSON.parse(message.payload) as { data?: Record<string, unknown> };
    if (payload.data?.admin_id !== adminId) continue;
    payload.data = { ...payload.data, username: null, ip: null, user_agent: null, detail: null, code: undefined };
    await db.updateTable('outbox').set({ payload: JSON.stringify(payload) }).where('id', '=', message.id).execute();
  }
}

/** Marks the admin erased, its name replaced; false when it already was. Events written after are stored erased. */
export async function markAdminErased(db: Db, adminId: string, now: number): Promise<boolean> {
  const result = await db.updateTable('admins').set({ erased_at: now, username: '(erased)' }).where('id', '=', adminId).where('erased_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
