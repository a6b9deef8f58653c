import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../src/auth/context.js';

/**
 * `count` live sessions of one admin, written directly: thousands of sign-ins would only measure
 * argon2. End them through the domain (e.g. disabling the admin) to fill the revocation feed.
 */
export async function insertSessions(services: Pick<AppContext, 'db' | 'clock'>, username: string, count: number): Promise<string[]> {
  const admin = await services.db.selectFrom('admins').select('id').where('username', '=', username).executeTakeFirstOrThrow();
  const now = Math.floor(services.clock.now() / 1000);
  const rows = Array.from({ length: count }, () => ({
    id: randomBytes(16).toString('base64url'),
    admin_id: admin.id,
    created_at: now,
    last_used_at: now,
    expires_at: now + 86_400,
    ip: null,
    user_agent: null,
  }));
  for (let i = 0; i < rows.length; i += 500) await services.db.insertInto('sessions').values(rows.slice(i, i + 500)).execute();
  return rows.map((row) => row.id);
}
