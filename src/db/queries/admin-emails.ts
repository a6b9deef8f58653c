import type { Db } from '../database.js';

export type EmailSource = 'operator' | 'sso' | 'scim';

export async function emailsOf(db: Db, adminId: string): Promise<string[]> {
  const rows = await db.selectFrom('admin_emails').select('address').where('admin_id', '=', adminId).orderBy('address').execute();
  return rows.map((row) => row.address);
}

export async function hasEmail(db: Db, adminId: string): Promise<boolean> {
  return (await db.selectFrom('admin_emails').select('admin_id').where('admin_id', '=', adminId).limit(1).executeTakeFirst()) !== undefined;
}

/** Every admin's addresses, for `admin list`. */
export async function emailsByAdmin(db: Db): Promise<Map<string, string[]>> {
  const rows = await db.selectFrom('admin_emails').select(['admin_id', 'address']).orderBy('address').execute();
  const byAdmin = new Map<string, string[]>();
  for (const row of rows) byAdmin.set(row.admin_id, [...(byAdmin.get(row.admin_id) ?? []), row.address]);
  return byAdmin;
}

/** An address and the directory's label for it (null: none said). */
export interface EmailEntry {
  readonly address: string;
  readonly type: string | null;
}

/** Replaces the addresses `source` gave the admin with `entries` (none when empty); the first of an address wins. */
export async function replaceEmails(db: Db, adminId: string, source: EmailSource, entries: readonly EmailEntry[], now: number): Promise<void> {
  await db.deleteFrom('admin_emails').where('admin_id', '=', adminId).where('source', '=', source).execute();
  if (entries.length === 0) return;
  await db
    .insertInto('admin_emails')
    .values(entries.map(({ address, type }) => ({ admin_id: adminId, address, type, source, added_at: now })))
    .onConflict((conflict) => conflict.columns(['admin_id', 'address']).doNothing())
    .execute();
}
