import type { Db } from '../database.js';

/** How many messages the outbox holds, per channel and state (delivered and dead ones until pruned). */
export async function countByState(db: Db): Promise<{ channel: string; state: string; n: number }[]> {
  const rows = await db
    .selectFrom('outbox')
    .select(['channel', 'state', (eb) => eb.fn.countAll<string | number>().as('n')])
    .groupBy(['channel', 'state'])
    .execute();
  return rows.map((row) => ({ channel: row.channel, state: row.state, n: Number(row.n) }));
}
