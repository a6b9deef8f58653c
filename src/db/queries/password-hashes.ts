import type { Db } from '../database.js';

/** Every stored password hash (PHC strings): their parameters decide the dummy hash's. */
export async function listPasswordHashes(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('admins').select('password_hash').execute();
  return rows.map((row) => row.password_hash);
}
