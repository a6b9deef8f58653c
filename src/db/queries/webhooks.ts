import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { WebhooksTable } from '../schema/notifications.js';

export type Webhook = Selectable<WebhooksTable>;

export async function insertWebhook(db: Db, webhook: Insertable<WebhooksTable>): Promise<void> {
  await db.insertInto('webhooks').values(webhook).execute();
}

export function listWebhooks(db: Db): Promise<Webhook[]> {
  return db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();
}

export function findWebhook(db: Db, id: string): Promise<Webhook | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The webhooks an event of `type` about `schoolKey` goes to. */
export function webhooksFor(db: Db, type: string, schoolKey: string | null): Promise<Pick<Webhook, 'id' | 'events'>[]> {
  return db
    .selectFrom('webhooks')
    .select(['id', 'events'])
    .where((eb) => (schoolKey === null ? eb('school_key', 'is', null) : eb.or([eb('school_key', 'is', null), eb('school_key', '=', schoolKey)])))
    .execute()
    .then((rows) => rows.filter((row) => row.events === '*' || row.events.split(',').includes(type)));
}

export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Replaces the secret; the old one keeps signing alongside until `previousUntil` (epoch ms). */
export async function replaceWebhookSecret(db: Db, id: string, secret: string, previous: string, previousUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ secret, previous_secret: previous, previous_until: previousUntil })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
